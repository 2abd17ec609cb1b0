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
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
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
	// OnStep, when set, is called as a site crawl's commit passes each of its steps (Steps, in
	// order): a test stops the process there to see what the next Open makes of the files.
	OnStep func(step string)
}

// The steps of a site crawl's commit, in the order it passes them (docs/spool.md, "The commit
// rule"), as Options.OnStep names them.
const (
	StepAppended    = "spool-appended"      // the batch is in the spool, fsynced; the snapshot is not saved yet
	StepSaved       = "snapshot-saved"      // the snapshot naming the batch is saved; no commit record yet
	StepCommitted   = "commit-written"      // the commit record is written; the events file has not the batch yet
	StepOutAppended = "events-out-appended" // the batch is appended to the events file, not synced yet
	StepOutSynced   = "events-out-synced"   // the events file is synced; the record saying so is not written yet
)

// Steps returns the steps in order.
func Steps() []string {
	return []string{StepAppended, StepSaved, StepCommitted, StepOutAppended, StepOutSynced}
}

func (s *Spool) step(name string) {
	if s.opts.OnStep != nil {
		s.opts.OnStep(name)
	}
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
	// undecided: pending when damage was found after it, which may have held its commit or abort
	// (resolve decides it by its site's next batch, decideDamaged, or leaves it behind).
	undecided bool
	// base is the batch the site's snapshot named when the crawl began (based: the record says;
	// PrepareOn): the next batch of a site was derived from its last saved one.
	base  uint64
	based bool
}

type segment struct {
	first uint64 // the name: no batch in it has a smaller id
	path  string
	size  int64
}

// Stats are the spool's numbers for /metrics and /healthz.
type Stats struct {
	Bytes        int64     // segments on disk
	Unsent       int       // committed events not acknowledged by the cursor (Retain only)
	OldestUnsent time.Time // spool time of the oldest of them; zero: none
	DroppedFull  int64     // events not spooled because the spool was full
	Damaged      int       // damaged records skipped at Open (each logged, kept beside its segment)
	LeftBehind   int       // events of batches whose commit or abort damage took, written to a left-behind file at Open
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

func (s *Spool) find(id uint64) *batch {
	i, ok := slices.BinarySearchFunc(s.batches, id, func(b *batch, id uint64) int { return cmp.Compare(b.id, id) })
	if !ok {
		return nil
	}
	return s.batches[i]
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

// roll starts a new segment named after the next batch id. The full one is synced first: its last
// commit and abort records were not, and the new segment's synced batches must not outlive them
// (a batch without its abort, before a later batch the snapshot names, would be committed at the
// next start).
func (s *Spool) roll() error {
	return s.rollAfter(true)
}

// rollAfter is roll; sync false moves on from a segment a failed write left broken.
func (s *Spool) rollAfter(sync bool) error {
	if s.active != nil && sync {
		if err := s.active.Sync(); err != nil {
			return fmt.Errorf("spool: sync the full segment: %w", err)
		}
	}
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

func (s *Spool) copyOut(b *batch, evs []events.Event) error {
	if err := s.opts.Out.Append(evs); err != nil {
		return err
	}
	s.step(StepOutAppended)
	if err := s.opts.Out.Sync(); err != nil {
		return err
	}
	s.step(StepOutSynced)
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
	return batchEvents(batchFields(buf[0], buf[1:]))
}

// writeRecord appends one record to the active segment (synced when sync). On a failed write the
// segment is cut back to its last whole record; when that fails too, the next record goes to a
// new segment (the cut-short bytes are then a torn tail that Open cuts off).
func (s *Spool) writeRecord(typ byte, id uint64, body []byte) error {
	return s.writeRaw(encodeRecord(typ, id, body), false)
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
			_ = s.rollAfter(false)
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
// before its save. The batch does not say what it was derived from (PrepareOn does).
func (s *Spool) Prepare(site string, evs []events.Event) (Batch, error) {
	return s.prepare(site, 0, false, evs)
}

// PrepareOn is Prepare for a crawl that diffed against a snapshot naming batch base (0: none):
// the record keeps base, and at Open it decides the site's batch before it when damage took that
// one's commit or abort (base is that batch: it was saved; base is older: it was not).
func (s *Spool) PrepareOn(site string, base uint64, evs []events.Event) (Batch, error) {
	return s.prepare(site, base, true, evs)
}

func (s *Spool) prepare(site string, base uint64, based bool, evs []events.Event) (Batch, error) {
	if len(evs) == 0 {
		return Batch{}, nil
	}
	var body bytes.Buffer
	typ := recBatch
	if based {
		typ = recBatchOn
		body.Write(binary.BigEndian.AppendUint64(nil, base))
	}
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
	if err := s.writeRaw(encodeRecord(typ, id, body.Bytes()), true); err != nil {
		return Batch{}, s.failed(err)
	}
	s.stats.LastErr, s.stats.DiskFull = nil, false
	s.lastID = id
	s.batches = append(s.batches, &batch{id: id, site: site, seg: seg, off: off, count: len(evs), at: time.Unix(0, int64(binary.BigEndian.Uint64(hdr[:]))),
		base: base, based: based})
	s.step(StepAppended)
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
	s.step(StepSaved)
	s.mu.Lock()
	defer s.mu.Unlock()
	bt := s.find(b.ID)
	if bt == nil {
		return fmt.Errorf("spool: commit of unknown batch %d", b.ID)
	}
	bt.state = committed
	werr := s.writeRecord(recCommit, b.ID, nil)
	s.step(StepCommitted)
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
