// What Open makes of the files it finds: records read back, a torn tail cut off, a corrupt segment
// set aside, and each interrupted batch kept or dropped by what the saved snapshots name.

package spool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// leaveBehind: a spool opened without Retain (Kafka switched off) that still holds events a
// Kafka cursor never acknowledged writes them to a file for `crawler replay` before they are
// deleted, and says so.
func (s *Spool) leaveBehind() {
	if s.opts.Retain || s.cursor == nil {
		return
	}
	path := s.leftBehindPath("")
	n, err := s.export(path, s.unsent())
	if n == 0 && err == nil {
		_ = os.Remove(path)
	}
	if n > 0 || err != nil {
		s.log.Warn("spool: Kafka is off; the events it had not acknowledged are written to a file and not sent",
			"unsent_left_behind", n, "file", path, "err", err, "note", "crawler replay FILE publishes them")
	}
	if err == nil {
		s.cursor = nil
		_ = os.Remove(filepath.Join(s.dir, "cursor.json"))
	}
}

// leftBehindPath names a new left-behind file: left-behind-<UTC second><suffix>.jsonl, or with
// -2, -3, ... before the suffix when a file of that name is there already (two starts within a
// second: the second's export replaced the first's file whole, and the batch it held, closed by
// its abort record, was never written again).
func (s *Spool) leftBehindPath(suffix string) string {
	stamp := s.opts.Now().UTC().Format("20060102T150405Z")
	path := filepath.Join(s.dir, "left-behind-"+stamp+suffix+".jsonl")
	for n := 2; ; n++ {
		if _, err := os.Lstat(path); err != nil {
			return path // not there (or not readable: the export says why)
		}
		path = filepath.Join(s.dir, fmt.Sprintf("left-behind-%s-%d%s.jsonl", stamp, n, suffix))
	}
}

// load scans every segment into the index.
func (s *Spool) load() error {
	names, err := filepath.Glob(filepath.Join(s.dir, "seg-*.log"))
	if err != nil {
		return fmt.Errorf("open spool: %w", err)
	}
	slices.Sort(names)
	for _, name := range names {
		first, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(name), "seg-"), ".log"), 10, 64)
		if err != nil {
			continue // not ours
		}
		seg := &segment{first: first, path: name}
		s.lastID = max(s.lastID, first)
		if err := s.scan(seg); err != nil {
			return err
		}
	}
	return nil
}

// scan reads seg's records into the index, marking each batch by the commit, abort or copy
// records that follow it. A record cut short at the end (a write a crash or a full disk
// interrupted: its length runs past the end and no whole record follows) is cut off, as are
// zeros to the end (space a crash allocated and never wrote). Any other record that does not read
// (its length, type or CRC does not check) is damage: it is skipped up to the next offset where a
// whole record checks, kept beside the segment, logged and counted. Damage costs the records it
// covers: a batch record in it is not sent, and a batch still undecided after it may have had its
// commit or abort there, so resolve decides it by its site's next batch (decideDamaged) or leaves
// it behind, rather than ask the snapshot alone.
func (s *Spool) scan(seg *segment) error {
	b, err := os.ReadFile(seg.path)
	if err != nil {
		return fmt.Errorf("open spool: read %s: %w", seg.path, err)
	}
	off := 0
	for off < len(b) {
		r, rerr := decodeRecord(b[off:])
		if rerr == nil {
			s.apply(seg, int64(off), r)
			off += r.n
			continue
		}
		next := resync(b, off+1)
		if next < 0 && (errors.Is(rerr, errTorn) || allZero(b[off:])) {
			s.cutTorn(seg, b, int64(off))
			break
		}
		if next < 0 {
			next = len(b)
		}
		s.damaged(seg, b, off, next, rerr)
		off = next
	}
	seg.size = int64(min(off, len(b)))
	s.segs = append(s.segs, seg)
	s.total += seg.size
	return nil
}

// apply adds a record to the index: a batch, or what happened to one (the first commit or abort
// decides; a copy implies a commit).
func (s *Spool) apply(seg *segment, off int64, r record) {
	s.lastID = max(s.lastID, r.id)
	if r.typ == recBatch {
		s.batches = append(s.batches, &batch{id: r.id, site: r.site, seg: seg, off: off, count: r.count, at: r.at, base: r.base, based: r.based})
		return
	}
	b := s.find(r.id)
	if b == nil {
		return // its batch record was damaged, or its segment deleted
	}
	switch {
	case r.typ == recCopied:
		b.state, b.copied = committed, true
	case b.state != pending:
	case r.typ == recCommit:
		b.state = committed
	case r.typ == recAbort:
		b.state = aborted
	}
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// damaged skips the damaged bytes b[off:next] of seg: it keeps them beside the segment (once),
// marks the batches still undecided (their commit or abort may have been in them), logs and
// counts.
func (s *Spool) damaged(seg *segment, b []byte, off, next int, why error) {
	aside := fmt.Sprintf("%s.damaged-%d", seg.path, off)
	if _, err := os.Stat(aside); err != nil {
		if err := os.WriteFile(aside, b[off:next], 0o644); err != nil {
			aside = "(not kept: " + err.Error() + ")"
		}
	}
	undecided := 0
	for _, bt := range s.batches {
		if bt.state == pending && !bt.undecided {
			bt.undecided = true
			undecided++
		}
	}
	s.stats.Damaged++
	s.log.Error("spool: damaged record skipped (disk damage); a batch in it is not sent, the records around it are",
		"segment", seg.path, "offset", off, "bytes", next-off, "err", why, "kept_as", aside, "resumes_at", next,
		"undecided_batches_before_it", undecided)
}

// cutTorn truncates seg at off, keeping the cut bytes beside it, and says so.
func (s *Spool) cutTorn(seg *segment, b []byte, off int64) {
	tail := b[off:]
	aside := fmt.Sprintf("%s.torn-%d", seg.path, off)
	if err := os.WriteFile(aside, tail, 0o644); err != nil {
		aside = "(not kept: " + err.Error() + ")"
	}
	if err := os.Truncate(seg.path, off); err != nil {
		s.log.Error("spool: torn last record not cut; the records appended after it skip it as damage at the next start", "segment", seg.path, "err", err)
	}
	s.stats.Torn++
	s.log.Warn("spool: torn last record cut (a write cut short by a crash or a full disk; its batch was never committed)",
		"segment", seg.path, "offset", off, "bytes", len(tail), "kept_as", aside)
}

// resolve commits or aborts every batch left pending by the last process, by what its site's
// saved snapshot names. A batch that damage may have decided (Spool.damaged) is not asked of the
// snapshot alone, which names only the site's last saved batch (a batch aborted before it would be
// sent): the site's next batch decides it (decideDamaged), or it is left behind (leaveUndecided).
func (s *Spool) resolve() {
	var undecided []*batch
	for _, b := range s.batches {
		if b.state != pending {
			continue
		}
		named := uint64(0)
		var err error
		if s.opts.Resolve != nil {
			named, err = s.opts.Resolve(b.site)
		}
		typ, what := recAbort, "dropped: its snapshot was not saved"
		switch {
		case b.undecided:
			var ok bool
			if typ, what, ok = s.decideDamaged(b, named, err); ok {
				break
			}
			if s.acked(b, b.count) {
				// The cursor passed it: sent, or skipped if aborted; nothing is left to send. (Taken
				// as committed before asking its next batch, an aborted one was copied to the
				// events file.)
				b.state = committed
			} else {
				undecided = append(undecided, b)
			}
			continue
		case err != nil:
			what = "dropped: its snapshot cannot be read (" + err.Error() + ")"
		case named >= b.id:
			typ, what = recCommit, "kept: its snapshot was saved"
		}
		if werr := s.writeRecord(typ, b.id, nil); werr != nil {
			s.log.Warn("spool: resolution not recorded; it is decided again at the next start", "batch", b.id, "err", werr)
		}
		if typ == recCommit {
			b.state = committed
		} else {
			b.state = aborted
		}
		s.log.Info("spool: batch of an interrupted crawl "+what, "batch", b.id, "site", b.site, "events", b.count, "snapshot_batch", named)
	}
	s.leaveUndecided(undecided)
}

// decideDamaged decides a batch whose commit or abort damage may have taken, when that can be
// known (ok): by the site's next batch in the spool, when its record says which batch the
// snapshot its crawl diffed against named (PrepareOn): that batch (it was saved) or an older one
// (it was not: the next crawl derived its transitions again, under other ids where the page had
// changed); with no later batch of the site, by the site's saved snapshot naming it (saved) or an
// older one (not saved). A snapshot naming a later batch, not in the spool or not saying its base,
// does not tell: the batch may have been aborted before it.
func (s *Spool) decideDamaged(b *batch, named uint64, rerr error) (typ byte, what string, ok bool) {
	var next *batch
	for _, l := range s.batches[slices.Index(s.batches, b)+1:] {
		if l.site == b.site {
			next = l
			break
		}
	}
	switch {
	case next != nil && next.based && next.base == b.id:
		return recCommit, "kept (its commit or abort was damaged): the next crawl of its site diffed against its snapshot", true
	case next != nil && next.based && next.base < b.id:
		return recAbort, "dropped (its commit or abort was damaged): the next crawl of its site diffed against an older snapshot and derived its transitions again", true
	case next != nil || rerr != nil:
		return 0, "", false
	case named == b.id:
		return recCommit, "kept (its commit or abort was damaged): its site's snapshot names it", true
	case named < b.id:
		return recAbort, "dropped (its commit or abort was damaged): its site's snapshot names an older batch", true
	}
	return 0, "", false
}

// leaveUndecided writes the batches whose commit or abort was lost to damage to a left-behind
// file for `crawler replay` (neither sent nor copied to the events file: they may have been
// aborted), names each in the log and counts their events; an abort record then closes each in
// the spool, so that the next start does not write them again. If the file cannot be written,
// they are set aside for this run only (nothing waits behind them) and tried again at the next
// start.
func (s *Spool) leaveUndecided(bs []*batch) {
	if len(bs) == 0 {
		return
	}
	path := s.leftBehindPath("-undecided")
	n, err := s.export(path, bs)
	for _, b := range bs {
		b.state = aborted
		if err != nil {
			continue
		}
		if werr := s.writeRecord(recAbort, b.id, nil); werr != nil {
			s.log.Warn("spool: left-behind batch not recorded; it is written to a file again at the next start", "batch", b.id, "err", werr)
		}
		s.log.Warn("spool: batch left behind: damage took its commit or abort, so it may have been aborted; it is not sent",
			"batch", b.id, "site", b.site, "events", b.count, "file", path,
			"note", "crawler replay FILE publishes it (if it was aborted, the next crawl derived its changes again: from a changed page, under other ids)")
	}
	if err != nil {
		s.log.Error("spool: batches whose commit or abort damage took are not written to a file; they are not sent, and tried again at the next start",
			"batches", len(bs), "file", path, "err", err)
		return
	}
	s.stats.LeftBehind += n
}

// copyPending copies the committed batches the events file lacks, in order.
func (s *Spool) copyPending() {
	if s.opts.Out == nil {
		return
	}
	for _, b := range s.batches {
		if b.state != committed || b.copied {
			continue
		}
		evs, err := s.read(b)
		if err == nil {
			err = s.copyOut(b, evs)
		}
		if err != nil {
			s.log.Error("spool: events file not caught up; tried again at the next commit", "batch", b.id, "err", err)
			return
		}
	}
}
