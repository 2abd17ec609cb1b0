package spool_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/eventstest"
	"github.com/golfcrawler/golf-crawler/events/spool"
)

// memOut is an events file in memory.
type memOut struct{ evs []events.Event }

func (m *memOut) Append(evs []events.Event) error { m.evs = append(m.evs, evs...); return nil }
func (m *memOut) Sync() error                     { return nil }

func open(t *testing.T, dir string, opts spool.Options) (*spool.Spool, *bytes.Buffer) {
	t.Helper()
	var log bytes.Buffer
	opts.Logger = slog.New(slog.NewTextHandler(&log, nil))
	s, err := spool.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, &log
}

func drain(t *testing.T, s *spool.Spool) []events.Event {
	t.Helper()
	items, err := s.Next(context.Background(), 1<<20, false)
	if err != nil {
		t.Fatal(err)
	}
	var evs []events.Event
	for _, it := range items {
		evs = append(evs, it.Event)
	}
	return evs
}

// TestOpenResolvesInterruptedBatches: a batch the crash left without its commit is kept when the
// site's saved snapshot names it and dropped when it does not, in the events file and for Kafka.
func TestOpenResolvesInterruptedBatches(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, _ := open(t, dir, spool.Options{Retain: true})
	saved, _ := s.Prepare("a", eventstest.Events(2, "saved", time.Now()))
	unsaved, _ := s.Prepare("b", eventstest.Events(3, "unsaved", time.Now()))
	s.Close() // the crash: neither has its commit
	out := &memOut{}
	named := map[string]uint64{"a": saved.ID, "b": unsaved.ID - 1}
	s2, log := open(t, dir, spool.Options{Retain: true, Out: out, Resolve: func(site string) (uint64, error) { return named[site], nil }})
	if len(out.evs) != 2 || out.evs[0].EventID != saved.Events[0].EventID {
		t.Errorf("events file after start-up: %d events, want the 2 of the saved batch", len(out.evs))
	}
	if _, err := s2.OpenCursor("t", "c"); err != nil {
		t.Fatal(err)
	}
	if got := drain(t, s2); len(got) != 2 {
		t.Errorf("sendable after start-up: %d events, want 2", len(got))
	}
	if !strings.Contains(log.String(), "dropped: its snapshot was not saved") || !strings.Contains(log.String(), "kept: its snapshot was saved") {
		t.Errorf("start-up did not say what it kept and dropped:\n%s", log)
	}
}

// TestTornLastRecordIsCut: a batch cut short by a crash mid-write is cut off at start-up and
// said; what was before it still sends, and new batches append after it.
func TestTornLastRecordIsCut(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, _ := open(t, dir, spool.Options{Retain: true})
	b1, _ := s.Prepare("a", eventstest.Events(2, "one", time.Now()))
	if err := s.Commit(b1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prepare("a", eventstest.Events(2, "two", time.Now())); err != nil {
		t.Fatal(err)
	}
	s.Close()
	segs, _ := filepath.Glob(filepath.Join(dir, "seg-*.log"))
	fi, _ := os.Stat(segs[len(segs)-1])
	if err := os.Truncate(segs[len(segs)-1], fi.Size()-10); err != nil {
		t.Fatal(err)
	}
	s2, log := open(t, dir, spool.Options{Retain: true, Resolve: func(string) (uint64, error) { return 1 << 62, nil }})
	if !strings.Contains(log.String(), "torn last record cut") {
		t.Errorf("no line about the torn record:\n%s", log)
	}
	if st := s2.Stats(); st.Torn != 1 {
		t.Errorf("torn records: %d, want 1", st.Torn)
	}
	b3, err := s2.Prepare("a", eventstest.Events(1, "three", time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Commit(b3); err != nil {
		t.Fatal(err)
	}
	mustCursor(t, s2, "t", "c")
	if got := drain(t, s2); len(got) != 3 {
		t.Errorf("sendable: %d events, want the 2 before the torn record and the 1 after", len(got))
	}
}

// TestDamageNamedAndKeptBeside: damage in the middle of one segment of three is skipped, named
// in the log (segment and offset), kept beside the segment and counted; the other segments' batches
// and the records after the damage still send, and start-up does not refuse.
func TestDamageNamedAndKeptBeside(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, _ := open(t, dir, spool.Options{Retain: true, SegmentBytes: 1})
	for i := range 3 {
		b, _ := s.Prepare("a", eventstest.Events(2, string(rune('a'+i)), time.Now()))
		if err := s.Commit(b); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	segs, _ := filepath.Glob(filepath.Join(dir, "seg-*.log"))
	if len(segs) < 3 {
		t.Fatalf("%d segments, want 3", len(segs))
	}
	b, _ := os.ReadFile(segs[1])
	b[len(b)/2] ^= 0xff // in the batch record
	if err := os.WriteFile(segs[1], b, 0o644); err != nil {
		t.Fatal(err)
	}
	s2, log := open(t, dir, spool.Options{Retain: true})
	if st := s2.Stats(); st.Damaged != 1 || st.LeftBehind != 0 {
		t.Errorf("damaged records %d, left behind %d: want 1 and 0", st.Damaged, st.LeftBehind)
	}
	if !strings.Contains(log.String(), "damaged record skipped") || !strings.Contains(log.String(), filepath.Base(segs[1])) {
		t.Errorf("the damage is not named:\n%s", log)
	}
	if aside, _ := filepath.Glob(segs[1] + ".damaged-*"); len(aside) != 1 {
		t.Errorf("damaged bytes kept as %v, want one file", aside)
	}
	mustCursor(t, s2, "t", "c")
	if got := drain(t, s2); len(got) != 4 {
		t.Errorf("sendable: %d events, want the 4 of the other segments", len(got))
	}
}

// TestZerosAtTheEndAreATornTail: zeros to the end of the last segment (space a machine crash
// allocated and never wrote: here where the last commit record was) are cut like a torn record,
// so the snapshot decides the batch before them.
func TestZerosAtTheEndAreATornTail(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, _ := open(t, dir, spool.Options{Retain: true})
	b1, _ := s.Prepare("a", eventstest.Events(2, "one", time.Now()))
	if err := s.Commit(b1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	segs, _ := filepath.Glob(filepath.Join(dir, "seg-*.log"))
	b, _ := os.ReadFile(segs[0])
	clear(b[len(b)-17:]) // the commit record
	if err := os.WriteFile(segs[0], b, 0o644); err != nil {
		t.Fatal(err)
	}
	s2, _ := open(t, dir, spool.Options{Retain: true, Resolve: func(string) (uint64, error) { return b1.ID, nil }})
	if st := s2.Stats(); st.Torn != 1 || st.Damaged != 0 || st.LeftBehind != 0 {
		t.Errorf("torn %d, damaged %d, left behind %d: want 1, 0, 0", st.Torn, st.Damaged, st.LeftBehind)
	}
	mustCursor(t, s2, "t", "c")
	if got := drain(t, s2); len(got) != 2 {
		t.Errorf("sendable: %d events, want the batch the snapshot names", len(got))
	}
}

// TestSpoolFullDropsNewest: at the cap the new batch is dropped and counted, without an error;
// acknowledged segments are deleted, which makes room again.
func TestSpoolFullDropsNewest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, _ := open(t, dir, spool.Options{Retain: true, MaxBytes: 4000, SegmentBytes: 1})
	if _, err := s.OpenCursor("t", "c"); err != nil {
		t.Fatal(err)
	}
	var kept, dropped int
	for i := range 20 {
		b, err := s.Prepare("a", eventstest.Events(2, string(rune('a'+i)), time.Now()))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Commit(b); err != nil {
			t.Fatal(err)
		}
		kept += len(b.Events)
		dropped += b.Dropped
	}
	st := s.Stats()
	if dropped == 0 || st.DroppedFull != int64(dropped) || st.Unsent != kept || st.Bytes > 4000 {
		t.Fatalf("kept %d dropped %d; stats %+v", kept, dropped, st)
	}
	items, _ := s.Next(context.Background(), 1<<20, false)
	if err := s.Ack(items[len(items)-1].After); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Unsent != 0 || st.Bytes > 1000 {
		t.Errorf("after the ack: %+v, want nothing unsent and the acknowledged segments deleted", st)
	}
	if b, _ := s.Prepare("a", eventstest.Events(2, "later", time.Now())); b.ID == 0 {
		t.Error("still full after the ack")
	}
}

// TestCursorOfAnotherClusterLeavesTheUnsentBehind: a new topic or cluster starts at the end; the
// unsent events go to a file for crawler replay, with their count logged.
func TestCursorOfAnotherClusterLeavesTheUnsentBehind(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, _ := open(t, dir, spool.Options{Retain: true})
	mustCursor(t, s, "t", "one")
	b, _ := s.Prepare("a", eventstest.Events(3, "x", time.Now()))
	if err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2, log := open(t, dir, spool.Options{Retain: true})
	left, err := s2.OpenCursor("t", "two")
	if err != nil || left != 3 {
		t.Fatalf("left behind %d (%v), want 3", left, err)
	}
	if got := drain(t, s2); len(got) != 0 {
		t.Errorf("the new cursor sends %d old events", len(got))
	}
	files, _ := filepath.Glob(filepath.Join(dir, "left-behind-*.jsonl"))
	if len(files) != 1 || len(eventstest.ReadEvents(t, files[0])) != 3 || !strings.Contains(log.String(), "unsent_left_behind=3") {
		t.Errorf("left-behind files %v; log:\n%s", files, log)
	}
}

func mustCursor(t *testing.T, s *spool.Spool, topic, cluster string) {
	t.Helper()
	if _, err := s.OpenCursor(topic, cluster); err != nil {
		t.Fatal(err)
	}
}

// TestUnsentSurviveRestartAndKafkaOff: the oldest unsent event's time comes from the spool, so a
// restart keeps it (and /healthz's alarm); a spool opened with Kafka off writes what Kafka never
// acknowledged to a left-behind file instead of deleting it.
func TestUnsentSurviveRestartAndKafkaOff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, _ := open(t, dir, spool.Options{Retain: true})
	mustCursor(t, s, "t", "c")
	b, _ := s.Prepare("a", eventstest.Events(4, "x", time.Now()))
	if err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	before := s.Stats()
	s.Close()
	s2, _ := open(t, dir, spool.Options{Retain: true})
	if after := s2.Stats(); after.Unsent != 4 || !after.OldestUnsent.Equal(before.OldestUnsent) {
		t.Errorf("after a restart: %+v, want %+v", after, before)
	}
	s2.Close()
	_, log := open(t, dir, spool.Options{Out: &memOut{}})
	files, _ := filepath.Glob(filepath.Join(dir, "left-behind-*.jsonl"))
	if len(files) != 1 || len(eventstest.ReadEvents(t, files[0])) != 4 || !strings.Contains(log.String(), "unsent_left_behind=4") {
		t.Errorf("Kafka off: left-behind files %v; log:\n%s", files, log)
	}
}

// TestOnStepNamesEachStepInOrder: a crawl's Prepare and Commit, with an events file, pass every
// step of the commit rule once, in Steps' order.
func TestOnStepNamesEachStepInOrder(t *testing.T) {
	t.Parallel()
	var steps []string
	s, _ := open(t, t.TempDir(), spool.Options{Out: &memOut{}, OnStep: func(step string) { steps = append(steps, step) }})
	b, err := s.Prepare("a", eventstest.Events(2, "x", time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(steps, spool.Steps()) {
		t.Errorf("steps %v, want %v", steps, spool.Steps())
	}
}
