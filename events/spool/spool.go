// Package spool is the crawler's outbox on its own disk: an append-only log of batches of
// booking events in segment files under <state-dir>/spool, covered by the state dir's lock.
//
// The commit rule: an event is sendable if and only if the snapshot that records its transition
// was saved. A site crawl appends its events as one batch (Prepare, fsynced), saves its snapshot
// naming the batch, then commits it (Commit); a failed save aborts it (Abort). A batch found
// without its commit or abort at Open is kept or dropped by what the site's saved snapshot names
// (Options.Resolve), so a crash at any step leaves only what the saved state records. Committed
// batches are copied to the events file (Options.Out) and, with Options.Retain, kept until a
// cursor (the Kafka sender's) acknowledges them.
package spool

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/internal/atomicfile"
	"github.com/golfcrawler/golf-crawler/internal/diskfull"
)

// Defaults of Options.
const (
	DefaultMaxBytes     int64 = 1 << 30 // ≈ 2.4M events at ~450 bytes
	DefaultSegmentBytes int64 = 16 << 20
)

// ErrDiskFull is the meaning of a Prepare error caused by a full disk.
var ErrDiskFull = errors.New("disk full")

// Record types.
const (
	recBatch  byte = 'B' // id, unix nanos, site, count, the events (one Encode per line)
	recCommit byte = 'C' // id: the snapshot naming the batch was saved
	recAbort  byte = 'A' // id: it was not; the batch is never sent
	recCopied byte = 'O' // id: the batch is in the events file (synced)
)

const headerLen = 8 // u32 length of type+payload, u32 CRC-32C of type+payload

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Out is the events file (crawler.EventLog): committed batches are appended to it and synced.
type Out interface {
	Append(evs []events.Event) error
	Sync() error
}

// Options configure Open.
type Options struct {
	MaxBytes     int64 // cap of the spool's segments; 0: DefaultMaxBytes
	SegmentBytes int64 // a segment is closed once it is this big; 0: DefaultSegmentBytes
	// Retain keeps committed batches until a cursor acknowledges them (Kafka publishing); without
	// it a batch is done once it is in Out.
	Retain bool
	// Resolve returns the last batch id that site's saved snapshot names (0: none): at Open, a
	// batch without its commit or abort is committed when its id is ≤ that, aborted otherwise.
	Resolve func(site string) (uint64, error)
	Out     Out // nil: no events file
	Logger  *slog.Logger
	Now     func() time.Time
}

// Batch is what Prepare appended: ID names it in the snapshot (0: nothing was appended).
type Batch struct {
	ID      uint64
	Events  []events.Event
	Dropped int // events not spooled because the spool is full
}

type state uint8

const (
	pending state = iota
	committed
	aborted
)

type batch struct {
	id     uint64
	site   string
	seg    *segment
	off    int64 // of the record
	count  int
	at     time.Time
	state  state
	copied bool
}

type segment struct {
	first uint64 // the name: no batch in it has a smaller id
	path  string
	size  int64
}

// Pos is a position in the spool: every event of the batches before Batch, and the first Index
// events of Batch, are acknowledged.
type Pos struct {
	Batch uint64 `json:"batch"`
	Index int    `json:"index"`
}

// cursorFile is the JSON of <dir>/cursor.json: what Kafka (topic, cluster) acknowledged.
type cursorFile struct {
	Topic     string `json:"topic"`
	ClusterID string `json:"cluster_id"`
	Pos
}

// Stats are the spool's numbers for /metrics and /healthz.
type Stats struct {
	Bytes        int64     // segments on disk
	Unsent       int       // committed events not acknowledged by the cursor (Retain only)
	OldestUnsent time.Time // spool time of the oldest of them; zero: none
	DroppedFull  int64     // events not spooled because the spool was full
	Corrupt      int       // segments set aside as corrupt since Open
	Torn         int       // torn records cut at Open
	LastErr      error     // the last failed append (nil after a successful one)
	DiskFull     bool      // LastErr is a full disk
}

// Spool is an open spool. Its methods are safe for concurrent use.
type Spool struct {
	dir  string
	opts Options
	log  *slog.Logger

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change a reader may wait for
	segs    []*segment
	batches []*batch // in id (and log) order
	active  *os.File
	total   int64
	lastID  uint64
	cursor  *cursorFile // nil: none yet (Retain: everything retained is unsent)
	stats   Stats
	closed  bool
	// cached is the last batch Next decoded (only Next, the one reader, uses it): a batch is sent
	// in several writes (it is bigger than a write), and each would otherwise decode it again.
	cached struct {
		id  uint64
		evs []events.Event
	}
}

// Open opens (creating it if needed) the spool in dir: it cuts a torn last record, sets aside a
// corrupt segment (renamed *.corrupt, logged, counted), resolves the batches without commit or
// abort (Options.Resolve) and copies the committed batches the events file lacks. Only I/O errors
// on dir itself fail it; nothing in the spool's content does.
func Open(dir string, opts Options) (*Spool, error) {
	opts.MaxBytes = cmp.Or(opts.MaxBytes, DefaultMaxBytes)
	opts.SegmentBytes = cmp.Or(opts.SegmentBytes, DefaultSegmentBytes)
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("open spool: %w", err)
	}
	s := &Spool{dir: dir, opts: opts, log: opts.Logger.With("spool", dir), changed: make(chan struct{})}
	if err := s.load(); err != nil {
		return nil, err
	}
	s.readCursor()
	if err := s.openActive(); err != nil {
		return nil, err
	}
	s.resolve()
	s.copyPending()
	s.leaveBehind()
	s.gc()
	return s, nil
}

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

var errTorn = errors.New("torn record")

// parseRecord parses the record at the start of b: its type, payload and length.
func parseRecord(b []byte) (byte, []byte, int, error) {
	if len(b) < headerLen {
		return 0, nil, 0, errTorn
	}
	n := int(binary.BigEndian.Uint32(b))
	if n < 1 || n > events.MaxEventBytes*100000 {
		return 0, nil, 0, fmt.Errorf("record length %d out of range", n)
	}
	if len(b) < headerLen+n {
		return 0, nil, 0, errTorn
	}
	body := b[headerLen : headerLen+n]
	if crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(b[4:]) {
		return 0, nil, 0, errors.New("checksum mismatch")
	}
	return body[0], body[1:], headerLen + n, nil
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

// mark applies a commit, abort or copy record found by scan to the batch it names (in any segment
// scanned so far).
func (s *Spool) mark(id uint64, typ byte) {
	b := s.find(id)
	if b == nil {
		return
	}
	switch typ {
	case recCommit:
		b.state = committed
	case recAbort:
		b.state = aborted
	case recCopied:
		b.state, b.copied = committed, true
	}
}

func (s *Spool) find(id uint64) *batch {
	i, ok := slices.BinarySearchFunc(s.batches, id, func(b *batch, id uint64) int { return cmp.Compare(b.id, id) })
	if !ok {
		return nil
	}
	return s.batches[i]
}

func batchHeader(p []byte) (site string, count int, at time.Time, err error) {
	if len(p) < 8+8+2 {
		return "", 0, time.Time{}, errors.New("batch record too short")
	}
	at = time.Unix(0, int64(binary.BigEndian.Uint64(p[8:])))
	sl := int(binary.BigEndian.Uint16(p[16:]))
	if len(p) < 18+sl+4 {
		return "", 0, time.Time{}, errors.New("batch record too short")
	}
	site = string(p[18 : 18+sl])
	count = int(binary.BigEndian.Uint32(p[18+sl:]))
	return site, count, at, nil
}

func batchEvents(p []byte) ([]events.Event, error) {
	sl := int(binary.BigEndian.Uint16(p[16:]))
	body := p[18+sl+4:]
	var evs []events.Event
	for line := range bytes.SplitSeq(body, []byte{'\n'}) {
		if len(line) == 0 {
			continue
		}
		e, err := events.Decode(line)
		if err != nil {
			return nil, err
		}
		evs = append(evs, e)
	}
	return evs, nil
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

// openActive opens the last segment for appending, or creates the first one.
func (s *Spool) openActive() error {
	if len(s.segs) == 0 {
		return s.roll()
	}
	seg := s.segs[len(s.segs)-1]
	f, err := os.OpenFile(seg.path, os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open spool: %w", err)
	}
	s.active = f
	return nil
}

// roll starts a new segment named after the next batch id.
func (s *Spool) roll() error {
	first := s.nextID()
	path := filepath.Join(s.dir, fmt.Sprintf("seg-%020d.log", first))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("spool: new segment: %w", err)
	}
	if err := atomicfile.SyncDir(s.dir); err != nil {
		f.Close()
		return fmt.Errorf("spool: new segment: %w", err)
	}
	if s.active != nil {
		_ = s.active.Close()
	}
	s.active = f
	s.segs = append(s.segs, &segment{first: first, path: path})
	s.lastID = max(s.lastID, first-1)
	return nil
}

// nextID is the id of the next batch: larger than every id in the spool and, so that an emptied
// (or deleted) spool never hands out an id a saved snapshot already names, than the clock's
// nanoseconds.
func (s *Spool) nextID() uint64 {
	return max(s.lastID+1, uint64(s.opts.Now().UnixNano()))
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

func (s *Spool) copyOut(b *batch, evs []events.Event) error {
	if err := s.opts.Out.Append(evs); err != nil {
		return err
	}
	if err := s.opts.Out.Sync(); err != nil {
		return err
	}
	b.copied = true
	// Not synced: if it is lost, the batch is copied again, with the same content.
	return s.writeRecord(recCopied, b.id, nil)
}

// read returns the events of b from its segment.
func (s *Spool) read(b *batch) ([]events.Event, error) {
	f, err := os.Open(b.seg.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var h [headerLen]byte
	if _, err := f.ReadAt(h[:], b.off); err != nil {
		return nil, err
	}
	buf := make([]byte, binary.BigEndian.Uint32(h[:]))
	if _, err := f.ReadAt(buf, b.off+headerLen); err != nil {
		return nil, err
	}
	if crc32.Checksum(buf, castagnoli) != binary.BigEndian.Uint32(h[4:]) {
		return nil, fmt.Errorf("spool: batch %d in %s: checksum mismatch", b.id, b.seg.path)
	}
	return batchEvents(buf[1:])
}

// writeRecord appends one record to the active segment (synced when sync). On a failed write the
// segment is cut back to its last whole record; when that fails too, the next record goes to a
// new segment (the cut-short bytes are then a torn tail that Open cuts off).
func (s *Spool) writeRecord(typ byte, id uint64, body []byte) error {
	return s.writeRaw(encodeRecord(typ, id, body), false)
}

func encodeRecord(typ byte, id uint64, body []byte) []byte {
	rec := make([]byte, headerLen+1+8, headerLen+1+8+len(body))
	rec[headerLen] = typ
	binary.BigEndian.PutUint64(rec[headerLen+1:], id)
	rec = append(rec, body...)
	binary.BigEndian.PutUint32(rec, uint32(len(rec)-headerLen))
	binary.BigEndian.PutUint32(rec[4:], crc32.Checksum(rec[headerLen:], castagnoli))
	return rec
}

func (s *Spool) writeRaw(rec []byte, sync bool) error {
	if s.active == nil {
		return errors.New("spool is closed")
	}
	seg := s.segs[len(s.segs)-1]
	_, err := s.active.Write(rec)
	if err == nil && sync {
		err = s.active.Sync()
	}
	if err != nil {
		if terr := s.active.Truncate(seg.size); terr != nil {
			_ = s.roll()
		}
		return err
	}
	seg.size += int64(len(rec))
	s.total += int64(len(rec))
	return nil
}

// Prepare appends evs as one batch of site and syncs it; the batch is sendable only once
// committed. With no events it appends nothing (ID 0). When the spool is full the batch is not
// spooled: its events are counted as dropped and Dropped says how many (no error: the crawl goes
// on). An error (ErrDiskFull for a full disk) means nothing was spooled: the crawl must fail
// before its save.
func (s *Spool) Prepare(site string, evs []events.Event) (Batch, error) {
	if len(evs) == 0 {
		return Batch{}, nil
	}
	var body bytes.Buffer
	var hdr [8 + 2]byte
	binary.BigEndian.PutUint64(hdr[:], uint64(s.opts.Now().UnixNano()))
	binary.BigEndian.PutUint16(hdr[8:], uint16(min(len(site), 1<<16-1)))
	body.Write(hdr[:])
	body.WriteString(site[:min(len(site), 1<<16-1)])
	var cnt [4]byte
	binary.BigEndian.PutUint32(cnt[:], uint32(len(evs)))
	body.Write(cnt[:])
	for _, e := range evs {
		b, err := events.Encode(e)
		if err != nil {
			return Batch{}, fmt.Errorf("spool event %s: %w", e.EventID, err)
		}
		body.Write(b)
		body.WriteByte('\n')
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Batch{}, errors.New("spool is closed")
	}
	if s.total+int64(body.Len())+headerLen+9 > s.opts.MaxBytes {
		s.stats.DroppedFull += int64(len(evs))
		s.log.Error("spool full: the crawl's events are dropped (never the crawl)", "site", site, "events", len(evs),
			"spool_bytes", s.total, "max_bytes", s.opts.MaxBytes, "reason", "spool_full")
		return Batch{Dropped: len(evs)}, nil
	}
	if seg := s.segs[len(s.segs)-1]; seg.size > 0 && seg.size+int64(body.Len()) > s.opts.SegmentBytes {
		if err := s.roll(); err != nil {
			return Batch{}, s.failed(err)
		}
	}
	id := s.nextID()
	seg := s.segs[len(s.segs)-1]
	off := seg.size
	if err := s.writeRaw(encodeRecord(recBatch, id, body.Bytes()), true); err != nil {
		return Batch{}, s.failed(err)
	}
	s.stats.LastErr, s.stats.DiskFull = nil, false
	s.lastID = id
	s.batches = append(s.batches, &batch{id: id, site: site, seg: seg, off: off, count: len(evs), at: time.Unix(0, int64(binary.BigEndian.Uint64(hdr[:])))})
	return Batch{ID: id, Events: evs}, nil
}

func (s *Spool) failed(err error) error {
	err = fmt.Errorf("spool append in %s: %w", s.dir, err)
	if diskfull.Is(err) {
		err = fmt.Errorf("%w: %w", ErrDiskFull, err)
	}
	s.stats.LastErr, s.stats.DiskFull = err, errors.Is(err, ErrDiskFull)
	return err
}

// Commit makes b sendable (its snapshot was saved) and copies it to the events file. The commit
// record is not synced: lost in a crash, Open commits the batch again from the snapshot. An error
// is the events file's; the batch stays committed and the file is caught up at the next commit.
func (s *Spool) Commit(b Batch) error {
	if b.ID == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	bt := s.find(b.ID)
	if bt == nil {
		return fmt.Errorf("spool: commit of unknown batch %d", b.ID)
	}
	bt.state = committed
	werr := s.writeRecord(recCommit, b.ID, nil)
	s.notify()
	var oerr error
	if s.opts.Out != nil {
		s.copyPendingLocked(bt, b.Events)
		if !bt.copied {
			oerr = fmt.Errorf("events file: batch %d not appended (kept in the spool; appended at the next commit)", b.ID)
		}
	}
	s.gc()
	if werr != nil {
		s.log.Warn("spool: commit record not written; the saved snapshot commits the batch at the next start", "batch", b.ID, "err", werr)
	}
	return oerr
}

// copyPendingLocked copies every committed batch up to and including cur that is not in the
// events file yet; cur's events are at hand.
func (s *Spool) copyPendingLocked(cur *batch, evs []events.Event) {
	for _, b := range s.batches {
		if b.state != committed || b.copied {
			continue
		}
		es := evs
		var err error
		if b != cur {
			es, err = s.read(b)
		}
		if err == nil {
			err = s.copyOut(b, es)
		}
		if err != nil {
			s.log.Error("spool: events file append failed; the batch stays in the spool", "batch", b.id, "err", err)
			return
		}
		if b == cur {
			return
		}
	}
}

// Abort drops b: its snapshot was not saved, so the next crawl derives its transitions again.
func (s *Spool) Abort(b Batch) {
	if b.ID == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if bt := s.find(b.ID); bt != nil {
		bt.state = aborted
	}
	if err := s.writeRecord(recAbort, b.ID, nil); err != nil {
		s.log.Warn("spool: abort record not written; the saved snapshot drops the batch at the next start", "batch", b.ID, "err", err)
	}
	s.notify()
	s.gc()
}

func (s *Spool) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// done reports whether b needs nothing more: aborted, or committed, in the events file and
// (Retain) acknowledged.
func (s *Spool) done(b *batch) bool {
	switch b.state {
	case aborted:
		return true
	case pending:
		return false
	}
	if s.opts.Out != nil && !b.copied {
		return false
	}
	if !s.opts.Retain && s.cursor == nil {
		return true
	}
	return s.acked(b, b.count)
}

func (s *Spool) acked(b *batch, n int) bool {
	if s.cursor == nil {
		return false
	}
	return b.id < s.cursor.Batch || (b.id == s.cursor.Batch && n <= s.cursor.Index)
}

// gc deletes the leading segments whose batches are all done (never the active one).
func (s *Spool) gc() {
	for len(s.segs) > 1 {
		seg := s.segs[0]
		n := 0
		for n < len(s.batches) && s.batches[n].seg == seg {
			if !s.done(s.batches[n]) {
				return
			}
			n++
		}
		if err := os.Remove(seg.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("spool: acknowledged segment not deleted", "segment", seg.path, "err", err)
			return
		}
		s.total -= seg.size
		s.segs = s.segs[1:]
		s.batches = s.batches[n:]
	}
}

// readCursor reads cursor.json; a missing or unreadable one leaves the cursor unset (everything
// retained is unsent: resent, which the consumer makes harmless).
func (s *Spool) readCursor() {
	b, err := os.ReadFile(filepath.Join(s.dir, "cursor.json"))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("spool: cursor unreadable; everything in the spool is sent again", "err", err)
		}
		return
	}
	var c cursorFile
	if err := json.Unmarshal(b, &c); err != nil {
		s.log.Warn("spool: cursor unreadable; everything in the spool is sent again", "err", err)
		return
	}
	s.cursor = &c
}

// OpenCursor starts reading for topic on the cluster clusterID. A cursor of another topic or
// cluster is replaced by one at the spool's end: the events it had not sent are written to a
// JSONL file beside the spool for `crawler replay` (logged with their count); left is how many.
func (s *Spool) OpenCursor(topic, clusterID string) (left int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.cursor
	switch {
	case c == nil:
		c = &cursorFile{Topic: topic, ClusterID: clusterID}
		if len(s.batches) > 0 {
			c.Batch = s.batches[0].id
		}
	case c.Topic != topic || c.ClusterID != clusterID:
		path := filepath.Join(s.dir, fmt.Sprintf("left-behind-%s.jsonl", s.opts.Now().UTC().Format("20060102T150405Z")))
		left, err = s.export(path)
		s.log.Warn("spool: topic or Kafka cluster changed; a new cursor starts at the spool's end",
			"old_topic", c.Topic, "old_cluster_id", c.ClusterID, "topic", topic, "cluster_id", clusterID,
			"unsent_left_behind", left, "file", path, "note", "crawler replay FILE publishes them")
		if err != nil {
			return left, err
		}
		c = &cursorFile{Topic: topic, ClusterID: clusterID, Pos: Pos{Batch: s.lastID + 1}}
	default:
		return 0, nil
	}
	if err := s.saveCursor(c); err != nil {
		return left, err
	}
	s.cursor = c
	s.gc()
	return left, nil
}

// export writes the unsent events to path (JSONL).
func (s *Spool) export(path string) (int, error) {
	n := 0
	err := atomicfile.Write(path, 0o644, func(f *os.File) error {
		for _, b := range s.batches {
			if b.state != committed || s.acked(b, b.count) {
				continue
			}
			evs, err := s.read(b)
			if err != nil {
				return err
			}
			if s.cursor != nil && b.id == s.cursor.Batch {
				evs = evs[min(s.cursor.Index, len(evs)):]
			}
			for _, e := range evs {
				line, err := events.Encode(e)
				if err != nil {
					return err
				}
				if _, err := f.Write(append(line, '\n')); err != nil {
					return err
				}
				n++
			}
		}
		return nil
	})
	return n, err
}

// saveCursor replaces cursor.json by a rename, without fsync: it is written after every
// acknowledged write, and a cursor a crash loses or cuts short only makes the events after an
// older cursor (or the whole spool) go again, which the consumer makes harmless.
func (s *Spool) saveCursor(c *cursorFile) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	path := filepath.Join(s.dir, "cursor.json")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("save spool cursor: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("save spool cursor: %w", err)
	}
	return nil
}

// Item is one event to send and its position after it.
type Item struct {
	Event events.Event
	After Pos
}

// Next returns up to limit committed events after the cursor, in spool order, waiting for one
// while wait is true (until ctx ends). It stops before a batch not yet committed or aborted. It
// is for one reader (the Kafka sender): the batches are read and decoded outside the spool's
// lock, so a crawl's Prepare or Commit never waits for them.
func (s *Spool) Next(ctx context.Context, limit int, wait bool) ([]Item, error) {
	for {
		s.mu.Lock()
		plan, err := s.planLocked(limit)
		ch := s.changed
		s.mu.Unlock()
		if err != nil {
			return nil, err
		}
		if len(plan) > 0 || !wait {
			return s.readPlan(plan, limit)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// planned is a batch Next reads from index from on.
type planned struct {
	b    *batch
	from int
}

// planLocked picks the committed batches after the cursor that hold the next limit events.
func (s *Spool) planLocked(limit int) ([]planned, error) {
	if s.cursor == nil {
		return nil, errors.New("spool: no cursor open")
	}
	var plan []planned
	n := 0
	for _, b := range s.batches {
		if n >= limit {
			break
		}
		if s.acked(b, b.count) || b.state == aborted {
			continue
		}
		if b.state == pending {
			break
		}
		from := 0
		if b.id == s.cursor.Batch {
			from = s.cursor.Index
		}
		plan = append(plan, planned{b: b, from: from})
		n += b.count - from
	}
	return plan, nil
}

// readPlan reads the planned batches (their segments stay until the reader acknowledges them).
func (s *Spool) readPlan(plan []planned, limit int) ([]Item, error) {
	var items []Item
	for _, p := range plan {
		evs := s.cached.evs
		if s.cached.id != p.b.id || evs == nil {
			var err error
			if evs, err = s.read(p.b); err != nil {
				return items, err
			}
			s.cached.id, s.cached.evs = p.b.id, evs
		}
		for i := p.from; i < len(evs) && len(items) < limit; i++ {
			items = append(items, Item{Event: evs[i], After: Pos{Batch: p.b.id, Index: i + 1}})
		}
	}
	return items, nil
}

// Ack records that Kafka acknowledged everything up to p, and deletes what is then done.
func (s *Spool) Ack(p Pos) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cursor == nil {
		return errors.New("spool: no cursor open")
	}
	c := *s.cursor
	c.Pos = p
	if b := s.find(p.Batch); b != nil && p.Index >= b.count {
		c.Pos = Pos{Batch: p.Batch + 1}
	}
	if err := s.saveCursor(&c); err != nil {
		return err
	}
	s.cursor = &c
	s.gc()
	return nil
}

// Stats returns the spool's numbers.
func (s *Spool) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Bytes = s.total
	if !s.opts.Retain {
		return st
	}
	for _, b := range s.batches {
		if b.state != committed || s.acked(b, b.count) {
			continue
		}
		n := b.count
		if s.cursor != nil && b.id == s.cursor.Batch {
			n -= s.cursor.Index
		}
		st.Unsent += n
		if st.OldestUnsent.IsZero() {
			st.OldestUnsent = b.at
		}
	}
	return st
}

// Dir is the spool's directory.
func (s *Spool) Dir() string { return s.dir }

// Close closes the active segment. Unsent events stay for the next Open.
func (s *Spool) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.notify()
	if s.active == nil {
		return nil
	}
	err := s.active.Close()
	s.active = nil
	return err
}
