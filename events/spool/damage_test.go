package spool_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/eventstest"
	"github.com/golfcrawler/golf-crawler/events/spool"
	"github.com/golfcrawler/golf-crawler/events/spool/spooltest"
)

// damageSpool writes one segment as a crawl after crawl with Kafka down leaves it: four committed
// batches of one site and, between the second and the third, a batch whose save failed (aborted):
// B1 C1 B2 C2 Bx Ax B3 C3 B4 C4. It returns the batches (x last), the segment and each record's
// offset, in that order.
func damageSpool(t *testing.T, dir string) (batches []spool.Batch, seg string, offs []int) {
	t.Helper()
	s, _ := open(t, dir, spool.Options{Retain: true})
	var aborted spool.Batch
	for i := range 5 {
		b, err := s.Prepare("a", eventstest.Events(5, fmt.Sprintf("b%d", i), time.Now()))
		if err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			s.Abort(b)
			aborted = b
			continue
		}
		if err := s.Commit(b); err != nil {
			t.Fatal(err)
		}
		batches = append(batches, b)
	}
	s.Close()
	segs, _ := filepath.Glob(filepath.Join(dir, "seg-*.log"))
	if len(segs) != 1 {
		t.Fatalf("%d segments, want 1", len(segs))
	}
	b, err := os.ReadFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range spooltest.Records(b) {
		offs = append(offs, r.Off)
	}
	if len(offs) != 10 {
		t.Fatalf("%d records, want 10", len(offs))
	}
	return append(batches, aborted), segs[0], offs
}

func idsOf(evs []events.Event) []string {
	var ids []string
	for _, e := range evs {
		ids = append(ids, e.EventID.String())
	}
	slices.Sort(ids)
	return ids
}

// TestDamagedRecordCostsOnlyItself (review 4, F2): one damaged byte in a record costs that
// record, not its segment. For each of the four committed batches, and for the aborted one's
// abort record, one byte of a record's length (small: the CRC no longer checks; large: the record
// runs past the next ones), CRC or payload is flipped; at Open the other batches are sent, a batch
// whose batch record is intact and whose commit or abort was lost is not decided by the snapshot
// (it would send the aborted batch) but written to a left-behind file and counted, and no event
// of the aborted batch is sent. A second Open decides nothing again.
func TestDamagedRecordCostsOnlyItself(t *testing.T) {
	t.Parallel()
	fields := []struct {
		name string
		at   func(off, n int) int // the byte flipped, for a record at off of n bytes
		mask byte
	}{
		{"length", func(off, _ int) int { return off + 3 }, 0xff},
		{"length-past-the-end", func(off, _ int) int { return off + 1 }, 0x01},
		{"crc", func(off, _ int) int { return off + 5 }, 0xff},
		{"payload", func(off, n int) int { return off + 8 + (n-8)/2 }, 0xff},
	}
	// Record i of damageSpool's segment and the batch it belongs to (4: the aborted one).
	records := []struct {
		rec, batch int
		what       string
	}{
		{0, 0, "batch"}, {1, 0, "commit"}, {2, 1, "batch"}, {3, 1, "commit"}, {5, 4, "abort"},
		{6, 2, "batch"}, {7, 2, "commit"}, {8, 3, "batch"}, {9, 3, "commit"},
	}
	for _, r := range records {
		for _, f := range fields {
			t.Run(fmt.Sprintf("batch%d-%s-%s", r.batch+1, r.what, f.name), func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				batches, seg, offs := damageSpool(t, dir)
				b, _ := os.ReadFile(seg)
				end := len(b)
				if r.rec+1 < len(offs) {
					end = offs[r.rec+1]
				}
				b[f.at(offs[r.rec], end-offs[r.rec])] ^= f.mask
				if err := os.WriteFile(seg, b, 0o644); err != nil {
					t.Fatal(err)
				}
				// The site's saved snapshot names the last committed batch, as it does after these crawls.
				resolve := func(string) (uint64, error) { return batches[3].ID, nil }
				s2, log := open(t, dir, spool.Options{Retain: true, Resolve: resolve})
				mustCursor(t, s2, "t", "c")
				sent := idsOf(drain(t, s2))
				var left []events.Event
				files, _ := filepath.Glob(filepath.Join(dir, "left-behind-*.jsonl"))
				for _, f := range files {
					left = append(left, eventstest.ReadEvents(t, f)...)
				}
				leftIDs := idsOf(left)
				has := func(ids []string, b spool.Batch) int {
					n := 0
					for _, e := range b.Events {
						if _, ok := slices.BinarySearch(ids, e.EventID.String()); ok {
							n++
						}
					}
					return n
				}
				for i, bt := range batches {
					s, l := has(sent, bt), has(leftIDs, bt)
					switch {
					case i == 4 && s > 0:
						t.Errorf("%d events of the aborted batch sent", s)
					case i == r.batch && r.what == "batch":
						if s > 0 || l > 0 {
							t.Errorf("batch %d, whose record is damaged: %d sent, %d left behind", i+1, s, l)
						}
					case i == r.batch && r.what == "commit":
						// Its commit is lost: left behind, or (a record cut at the end) decided by the
						// snapshot, which names it.
						if s+l != len(bt.Events) || s > 0 && l > 0 {
							t.Errorf("batch %d, whose commit is damaged: %d sent, %d left behind, want its %d events once", i+1, s, l, len(bt.Events))
						}
					case i == 4 && r.what == "abort":
						if l != len(bt.Events) {
							t.Errorf("the aborted batch, whose abort is damaged: %d events left behind, want %d", l, len(bt.Events))
						}
					case i == 4:
						if l > 0 {
							t.Errorf("%d events of the aborted batch left behind", l)
						}
					default:
						if s != len(bt.Events) || l > 0 {
							t.Errorf("intact batch %d: %d of %d events sent, %d left behind", i+1, s, len(bt.Events), l)
						}
					}
				}
				if len(sent) != len(slices.Compact(slices.Clone(sent))) {
					t.Errorf("an event sent twice")
				}
				st := s2.Stats()
				if st.Damaged+st.Torn != 1 {
					t.Errorf("damaged records %d, torn %d: want one of them", st.Damaged, st.Torn)
				}
				if st.LeftBehind != len(left) {
					t.Errorf("left behind: %d counted, %d in files", st.LeftBehind, len(left))
				}
				if len(left) > 0 && !strings.Contains(log.String(), "left-behind") {
					t.Errorf("the left-behind file is not named in the log:\n%s", log)
				}
				if t.Failed() {
					t.Logf("log:\n%s", log)
				}
				s2.Close()
				// The next start decides nothing again: no new left-behind file, the same sendable events.
				s3, _ := open(t, dir, spool.Options{Retain: true, Resolve: resolve})
				files2, _ := filepath.Glob(filepath.Join(dir, "left-behind-*.jsonl"))
				if len(files2) != len(files) || s3.Stats().LeftBehind != 0 {
					t.Errorf("the second start left behind again: %d files, then %d (%d events)", len(files), len(files2), s3.Stats().LeftBehind)
				}
				mustCursor(t, s3, "t", "c")
				if again := idsOf(drain(t, s3)); !slices.Equal(again, sent) {
					t.Errorf("the second start sends %d events, the first %d", len(again), len(sent))
				}
			})
		}
	}
}

// FuzzOpenDamagedSegment: whatever a segment holds, Open reads it without an error or a panic,
// and a second Open sends the same events and leaves nothing behind again (what damage decided is
// recorded once). Seeds: damageSpool's segment, with one byte flipped here and there.
func FuzzOpenDamagedSegment(f *testing.F) {
	dir := f.TempDir()
	s, err := spool.Open(dir, spool.Options{Retain: true})
	if err != nil {
		f.Fatal(err)
	}
	var base uint64
	for i := range 4 {
		evs := eventstest.Events(2, fmt.Sprintf("f%d", i), time.Now())
		var b spool.Batch
		if i < 2 {
			b, _ = s.Prepare("a", evs)
		} else {
			b, _ = s.PrepareOn("a", base, evs) // as the crawler's batches: they say their base
		}
		if i == 1 {
			s.Abort(b)
		} else if err := s.Commit(b); err != nil {
			f.Fatal(err)
		} else {
			base = b.ID
		}
	}
	s.Close()
	segs, _ := filepath.Glob(filepath.Join(dir, "seg-*.log"))
	seed, err := os.ReadFile(segs[0])
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	for _, at := range []int{0, 3, 5, 9, len(seed) / 3, len(seed) / 2, len(seed) - 10} {
		b := slices.Clone(seed)
		b[at] ^= 0x5a
		f.Add(b)
	}
	f.Add(seed[:len(seed)-5])
	f.Fuzz(func(t *testing.T, seg []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "seg-00000000000000000001.log"), seg, 0o644); err != nil {
			t.Fatal(err)
		}
		resolve := func(string) (uint64, error) { return 1 << 62, nil }
		sendable := func() ([]string, int) {
			s, err := spool.Open(dir, spool.Options{Retain: true, Resolve: resolve})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.OpenCursor("t", "c"); err != nil {
				t.Fatal(err)
			}
			items, err := s.Next(context.Background(), 1<<20, false)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, it := range items {
				ids = append(ids, it.Event.EventID.String())
			}
			return ids, s.Stats().LeftBehind
		}
		first, _ := sendable()
		second, left := sendable()
		if !slices.Equal(first, second) || left != 0 {
			t.Errorf("the second Open sends %d events (the first %d) and leaves %d behind again", len(second), len(first), left)
		}
	})
}

// TestDamageAfterASentBatchLeavesNothingBehind: a batch Kafka acknowledged was committed (only
// committed batches are sent), so damage to its commit record leaves nothing behind.
func TestDamageAfterASentBatchLeavesNothingBehind(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, seg, offs := damageSpool(t, dir)
	s, _ := open(t, dir, spool.Options{Retain: true})
	mustCursor(t, s, "t", "c")
	items, err := s.Next(context.Background(), 1<<20, false)
	if err != nil || len(items) != 20 {
		t.Fatalf("%d items (%v), want 20", len(items), err)
	}
	if err := s.Ack(items[len(items)-1].After); err != nil {
		t.Fatal(err)
	}
	s.Close()
	b, _ := os.ReadFile(seg)
	b[offs[1]+5] ^= 0xff // the first batch's commit record
	if err := os.WriteFile(seg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s2, log := open(t, dir, spool.Options{Retain: true})
	if st := s2.Stats(); st.Damaged != 1 || st.LeftBehind != 0 || st.Unsent != 0 {
		t.Errorf("damaged %d, left behind %d, unsent %d: want 1, 0, 0\n%s", st.Damaged, st.LeftBehind, st.Unsent, log)
	}
}

// TestLeftBehindFilesOfOneSecondAreKept: two starts within one second that each leave a batch
// behind write two files. The file was named by the second alone and replaced whole, so the
// batch the first start left behind (and closed with an abort record, never to leave again) was
// in no file: the chaos run of TestSpoolDamageDuringOutage lost a crawl's events that way when
// two SIGKILLed starts came within a second.
func TestLeftBehindFilesOfOneSecondAreKept(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	batches, seg, offs := damageSpool(t, dir)
	now := func() time.Time { return time.Date(2026, 12, 5, 0, 10, 3, 0, time.UTC) }
	flip := func(off int) {
		t.Helper()
		b, err := os.ReadFile(seg)
		if err != nil {
			t.Fatal(err)
		}
		b[off+5] ^= 0xff // the record's CRC
		if err := os.WriteFile(seg, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	flip(offs[1]) // the first batch's commit record
	s1, _ := open(t, dir, spool.Options{Retain: true, Now: now})
	s1.Close()
	flip(offs[3]) // the second batch's commit record
	s2, log := open(t, dir, spool.Options{Retain: true, Now: now})
	s2.Close()

	files, _ := filepath.Glob(filepath.Join(dir, "left-behind-*.jsonl"))
	var got []string
	for _, f := range files {
		got = append(got, idsOf(eventstest.ReadEvents(t, f))...)
	}
	slices.Sort(got)
	want := idsOf(slices.Concat(batches[0].Events, batches[1].Events))
	if !slices.Equal(got, want) {
		t.Errorf("the left-behind files %v hold %d events, want the first two batches' %d\n%s", files, len(got), len(want), log)
	}
}

// TestDamagedDecisionIsTakenFromTheNextBatch: a batch whose commit or abort damage took, with a
// later batch of its site that says what it was derived from (PrepareOn), is decided by that one,
// not left behind. Aborted: a crawl killed after its append, dropped at the next start (its abort
// record), then derived again by the next crawl from the same snapshot, under other ids where the
// page had changed; left behind and replayed, the aborted content is stored beside the re-derived
// one (chaos's TestSpoolDamageDuringOutage: 'changes the price from 106000, but the price before
// was 107000'). Committed: the next crawl diffed against the snapshot naming it.
func TestDamagedDecisionIsTakenFromTheNextBatch(t *testing.T) {
	t.Parallel()
	for _, saved := range []bool{false, true} {
		t.Run(map[bool]string{false: "aborted", true: "committed"}[saved], func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			now := time.Now()
			var named uint64
			resolve := func(string) (uint64, error) { return named, nil }
			prepare := func(s *spool.Spool, base uint64, name string) spool.Batch {
				t.Helper()
				b, err := s.PrepareOn("a", base, eventstest.Events(3, name, now))
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
			commit := func(s *spool.Spool, b spool.Batch) {
				t.Helper()
				if err := s.Commit(b); err != nil {
					t.Fatal(err)
				}
				named = b.ID
			}
			s1, _ := open(t, dir, spool.Options{Retain: true, Resolve: resolve})
			first := prepare(s1, 0, "first")
			commit(s1, first)
			x := prepare(s1, first.ID, "x")
			want := slices.Concat(first.Events)
			if saved {
				commit(s1, x) // B C B C, then the next crawl's B C: x's commit is record 3
				want = append(want, x.Events...)
			}
			s1.Close() // killed before x's save: the next start aborts it, record 3
			s2, _ := open(t, dir, spool.Options{Retain: true, Resolve: resolve})
			base := named
			if !saved {
				again := prepare(s2, base, "again") // x's transitions derived again, the page changed
				commit(s2, again)
				want = append(want, again.Events...)
			}
			next := prepare(s2, named, "next")
			commit(s2, next)
			want = append(want, next.Events...)
			s2.Close()

			segs, _ := filepath.Glob(filepath.Join(dir, "seg-*.log"))
			b, err := os.ReadFile(segs[0])
			if err != nil {
				t.Fatal(err)
			}
			b[spooltest.Records(b)[3].CRC()+1] ^= 0xff // record 3's CRC: x's commit or abort
			if err := os.WriteFile(segs[0], b, 0o644); err != nil {
				t.Fatal(err)
			}
			s3, log := open(t, dir, spool.Options{Retain: true, Resolve: resolve})
			mustCursor(t, s3, "t", "c")
			sent := idsOf(drain(t, s3))
			if !slices.Equal(sent, idsOf(want)) {
				t.Errorf("%d events sent, want %d (x %s)", len(sent), len(want), map[bool]string{false: "not sent", true: "sent"}[saved])
			}
			if st := s3.Stats(); st.Damaged != 1 || st.LeftBehind != 0 {
				t.Errorf("damaged %d, left behind %d: want 1, 0\n%s", st.Damaged, st.LeftBehind, log)
			}
		})
	}
}

// TestDamagedAbortBeforeTheCursorIsNotCopied: a batch the cursor has passed was sent or, aborted,
// skipped; with its abort record damaged it was taken as committed (acknowledged, so sent) and
// copied to the events file at the next start, a price no saved snapshot recorded. The site's
// next batch decides it first.
func TestDamagedAbortBeforeTheCursorIsNotCopied(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := &memOut{}
	s, _ := open(t, dir, spool.Options{Retain: true, Out: out})
	prepare := func(base uint64, name string) spool.Batch {
		t.Helper()
		b, err := s.PrepareOn("a", base, eventstest.Events(3, name, time.Now()))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first := prepare(0, "first")
	if err := s.Commit(first); err != nil {
		t.Fatal(err)
	}
	x := prepare(first.ID, "x")
	s.Abort(x) // its save failed
	next := prepare(first.ID, "next")
	if err := s.Commit(next); err != nil {
		t.Fatal(err)
	}
	mustCursor(t, s, "t", "c")
	items, err := s.Next(context.Background(), 1<<20, false)
	if err != nil || len(items) != 6 {
		t.Fatalf("%d items (%v), want 6", len(items), err)
	}
	if err := s.Ack(items[len(items)-1].After); err != nil {
		t.Fatal(err)
	}
	s.Close()
	segs, _ := filepath.Glob(filepath.Join(dir, "seg-*.log"))
	if aborts := spooltest.DamageCRC(t, segs[0], 'A'); aborts != 1 {
		t.Fatalf("%d abort records, want 1", aborts)
	}
	out2 := &memOut{}
	s2, log := open(t, dir, spool.Options{Retain: true, Out: out2})
	for _, id := range idsOf(out2.evs) {
		if slices.Contains(idsOf(x.Events), id) {
			t.Errorf("the aborted batch's event %s copied to the events file at the next start\n%s", id, log)
			break
		}
	}
	if st := s2.Stats(); st.Damaged != 1 || st.LeftBehind != 0 {
		t.Errorf("damaged %d, left behind %d: want 1, 0", st.Damaged, st.LeftBehind)
	}
}
