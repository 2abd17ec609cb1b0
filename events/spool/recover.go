// What Open makes of the files it finds: records read back, a torn tail cut off, a corrupt segment
// set aside, and each interrupted batch kept or dropped by what the saved snapshots name.

package spool

import (
	"encoding/binary"
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
	path := filepath.Join(s.dir, fmt.Sprintf("left-behind-%s.jsonl", s.opts.Now().UTC().Format("20060102T150405Z")))
	n, err := s.export(path)
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

// scan reads seg's records. A record cut short at the end (a write a crash or a full disk
// interrupted) is cut off; a complete record that fails its checksum, or does not parse, makes the
// whole segment suspect: it is set aside and named, and the rest of the spool is used.
func (s *Spool) scan(seg *segment) error {
	b, err := os.ReadFile(seg.path)
	if err != nil {
		return fmt.Errorf("open spool: read %s: %w", seg.path, err)
	}
	var found []*batch
	done := map[uint64]byte{}
	off := int64(0)
	for off < int64(len(b)) {
		typ, payload, n, rerr := parseRecord(b[off:])
		if errors.Is(rerr, errTorn) {
			s.cutTorn(seg, b, off)
			break
		}
		if rerr == nil {
			rerr = s.apply(seg, off, typ, payload, &found, done)
		}
		if rerr != nil {
			s.setAside(seg, off, rerr)
			return nil
		}
		off += int64(n)
	}
	seg.size = min(off, int64(len(b)))
	s.segs = append(s.segs, seg)
	s.total += seg.size
	s.batches = append(s.batches, found...)
	for id, typ := range done {
		s.mark(id, typ)
	}
	return nil
}

// apply adds a record to what scan found.
func (s *Spool) apply(seg *segment, off int64, typ byte, payload []byte, found *[]*batch, done map[uint64]byte) error {
	if len(payload) < 8 {
		return fmt.Errorf("record %q too short", typ)
	}
	id := binary.BigEndian.Uint64(payload)
	switch typ {
	case recBatch:
		site, count, at, err := batchHeader(payload)
		if err != nil {
			return err
		}
		*found = append(*found, &batch{id: id, site: site, seg: seg, off: off, count: count, at: at})
		s.lastID = max(s.lastID, id)
	case recCopied:
		done[id] = recCopied // implies committed
	case recCommit, recAbort:
		if done[id] == 0 {
			done[id] = typ
		}
	default:
		return fmt.Errorf("unknown record type %q", typ)
	}
	return nil
}

// cutTorn truncates seg at off, keeping the cut bytes beside it, and says so.
func (s *Spool) cutTorn(seg *segment, b []byte, off int64) {
	tail := b[off:]
	aside := fmt.Sprintf("%s.torn-%d", seg.path, off)
	if err := os.WriteFile(aside, tail, 0o644); err != nil {
		aside = "(not kept: " + err.Error() + ")"
	}
	if err := os.Truncate(seg.path, off); err != nil {
		s.log.Error("spool: torn last record not cut; the segment is set aside", "segment", seg.path, "err", err)
	}
	s.stats.Torn++
	s.log.Warn("spool: torn last record cut (a write cut short by a crash or a full disk; its batch was never committed)",
		"segment", seg.path, "offset", off, "bytes", len(tail), "kept_as", aside)
}

// setAside renames a corrupt segment to *.corrupt, logs and counts it.
func (s *Spool) setAside(seg *segment, off int64, why error) {
	aside := seg.path + ".corrupt"
	if err := os.Rename(seg.path, aside); err != nil {
		aside = "(rename failed: " + err.Error() + ")"
	}
	s.stats.Corrupt++
	s.log.Error("spool: corrupt segment set aside; its events are not sent (the rest of the spool is)",
		"segment", seg.path, "offset", off, "err", why, "moved_to", aside)
}

// resolve commits or aborts every batch left pending by the last process, by what its site's
// saved snapshot names.
func (s *Spool) resolve() {
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
