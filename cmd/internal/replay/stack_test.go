package replay_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/replay"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// TestPracticeReplay is the practice walkthrough: ingest the practice set once, then a dry run
// says every event is already stored and publishes nothing, and two more replays of the same file
// leave the row count and booking_lifetimes unchanged.
func TestPracticeReplay(t *testing.T) {
	t.Parallel()
	set := practiceBytes(t)
	evs := decodeAll(t, set)
	distinct := distinctIDs(evs)
	addr, topic, db, c, w := replayPipeline(t)

	replayAll := func(round int) {
		rep, err := replay.Run(t.Context(), bytes.NewReader(set), replay.Options{}, replay.Deps{Writer: w, Logger: testkit.Logger(t, slog.LevelWarn)})
		if err != nil {
			t.Fatalf("replay %d: %v", round, err)
		}
		if rep.Read != len(evs) || rep.Published != len(evs) || rep.Failed != 0 || rep.Invalid != 0 {
			t.Fatalf("replay %d: read %d published %d failed %d invalid %d, want %d read and published",
				round, rep.Read, rep.Published, rep.Failed, rep.Invalid, len(evs))
		}
		want := int64(round * len(evs))
		testkit.WaitForf(t, 60*time.Second, func() string {
			return fmt.Sprintf("consumer at %d of %d messages after replay %d", c.Metrics.Consumed.Load(), want, round)
		}, func() bool { return c.Metrics.Consumed.Load() >= want })
	}

	replayAll(1)
	if got := countRows(t, db); got != int64(distinct) {
		t.Fatalf("after one replay: %d rows, want %d (distinct event ids)", got, distinct)
	}
	view := lifetimes(t, db)

	before := endOffsets(t, addr, topic)
	rep, err := replay.Run(t.Context(), bytes.NewReader(set), replay.Options{DryRun: true},
		replay.Deps{Store: store.New(db), Logger: testkit.Logger(t, slog.LevelWarn)})
	if err != nil {
		t.Fatalf("dry run: %v", err)
	}
	if after := endOffsets(t, addr, topic); after != before {
		t.Errorf("dry run moved the topic's end offsets from %d to %d", before, after)
	}
	if !rep.StoreChecked || rep.AlreadyStored != distinct || rep.New != 0 || rep.Published != 0 || rep.Selected != len(evs) {
		t.Errorf("dry run: checked %v already stored %d new %d published %d selected %d; want %d stored, 0 new, 0 published, %d selected",
			rep.StoreChecked, rep.AlreadyStored, rep.New, rep.Published, rep.Selected, distinct, len(evs))
	}

	replayAll(2)
	replayAll(3)
	if got := countRows(t, db); got != int64(distinct) {
		t.Errorf("after three replays: %d rows, want %d", got, distinct)
	}
	if got := c.Metrics.Inserted.Load(); got != int64(distinct) {
		t.Errorf("consumer inserted %d, want %d", got, distinct)
	}
	if again := lifetimes(t, db); again != view {
		t.Errorf("booking_lifetimes changed after replaying twice more (%d vs %d bytes)", len(again), len(view))
	}
}

// TestDryRunNewEvents: a dry run against an empty database says every event would be new, and
// needs no writer.
func TestDryRunNewEvents(t *testing.T) {
	t.Parallel()
	set := firstLines(practiceBytes(t), 1200)
	db := storetest.NewDB(t)
	rep, err := replay.Run(t.Context(), bytes.NewReader(set), replay.Options{DryRun: true, Since: time.Unix(0, 0)},
		replay.Deps{Store: store.New(db)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Selected != 1200 || rep.AlreadyStored != 0 || rep.New != 1200 || !rep.StoreChecked {
		t.Errorf("selected %d stored %d new %d checked %v; want 1200 selected, all new", rep.Selected, rep.AlreadyStored, rep.New, rep.StoreChecked)
	}
}

// TestReplayWindowAndMax publishes only [Since, Until) and at most Max events.
func TestReplayWindowAndMax(t *testing.T) {
	t.Parallel()
	set := practiceBytes(t)
	evs := decodeAll(t, set)
	addr := kafkatest.Bootstrap(t)
	since := evs[len(evs)/4].OccurredAt
	until := evs[len(evs)/2].OccurredAt
	want := 0
	for _, e := range evs {
		if !e.OccurredAt.Before(since) && e.OccurredAt.Before(until) {
			want++
		}
	}
	if want == 0 || want == len(evs) {
		t.Fatalf("bad window: %d of %d events", want, len(evs))
	}

	for _, tc := range []struct {
		name      string
		opts      replay.Options
		published int // and the messages on the topic
		// other is a second count of the report and what it should be.
		other func(replay.Report) (what string, got, want int)
	}{
		{"Window", replay.Options{Since: since, Until: until}, want,
			func(rep replay.Report) (string, int, int) { return "skipped", rep.Skipped, len(evs) - want }},
		{"Max", replay.Options{Since: since, Max: 321, BatchSize: 100}, 321,
			func(rep replay.Report) (string, int, int) { return "selected", rep.Selected, 321 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			topic := kafkatest.Topic(t, addr, 3)
			rep, err := replay.Run(t.Context(), bytes.NewReader(set), tc.opts, replay.Deps{Writer: newWriter(t, addr, topic)})
			if err != nil {
				t.Fatal(err)
			}
			if what, got, wantOther := tc.other(rep); rep.Published != tc.published || got != wantOther {
				t.Errorf("published %d %s %d, want %d and %d", rep.Published, what, got, tc.published, wantOther)
			}
			if got := endOffsets(t, addr, topic); got != int64(tc.published) {
				t.Errorf("topic holds %d messages, want %d", got, tc.published)
			}
		})
	}
}

// TestReplayRate: at Rate N, M events take at least (M - burst)/N seconds (burst = N/10). Only the
// lower bound is asserted: a limiter must never let more through; slower is the machine.
func TestReplayRate(t *testing.T) {
	t.Parallel()
	const m, rate = 600, 1000.0
	set := firstLines(practiceBytes(t), m)
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Topic(t, addr, 3)
	start := time.Now()
	rep, err := replay.Run(t.Context(), bytes.NewReader(set), replay.Options{Rate: rate},
		replay.Deps{Writer: newWriter(t, addr, topic)})
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Published != m {
		t.Errorf("published %d, want %d", rep.Published, m)
	}
	burst := rate / 10
	if min := time.Duration((m - burst) / rate * float64(time.Second)); elapsed < min {
		t.Errorf("%d events at %.0f/s took %v, less than the limiter's minimum %v", m, rate, elapsed, min)
	}
	if got := endOffsets(t, addr, topic); got != m {
		t.Errorf("topic holds %d messages, want %d", got, m)
	}
}

// cancelAfter is a Writer that cancels the run's context once k events were acknowledged.
type cancelAfter struct {
	w      replay.Writer
	k      int64
	n      atomic.Int64
	cancel context.CancelFunc
}

func (c *cancelAfter) WriteEvents(ctx context.Context, evs []events.Event) error {
	err := c.w.WriteEvents(ctx, evs)
	if c.n.Add(int64(len(evs))) >= c.k {
		c.cancel()
	}
	return err
}

// TestReplayInterruptedThenAgain interrupts a replay midway, then replays the whole file: no
// duplicate rows.
func TestReplayInterruptedThenAgain(t *testing.T) {
	t.Parallel()
	set := firstLines(practiceBytes(t), 3000)
	evs := decodeAll(t, set)
	distinct := distinctIDs(evs)
	_, _, db, c, w := replayPipeline(t)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cw := &cancelAfter{w: w, k: 1000, cancel: cancel}
	rep, err := replay.Run(ctx, bytes.NewReader(set), replay.Options{BatchSize: 250}, replay.Deps{Writer: cw})
	if !errors.Is(err, replay.ErrNotPublished) || !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted replay returned %v, want ErrNotPublished and context.Canceled", err)
	}
	if !rep.Interrupted || rep.Published != 1000 || rep.LastLine != 1000 || rep.Failed != 0 {
		t.Fatalf("interrupted replay: interrupted %v published %d last line %d failed %d; want 1000 published through line 1000",
			rep.Interrupted, rep.Published, rep.LastLine, rep.Failed)
	}
	if rep.LastEventID != evs[999].EventID {
		t.Errorf("last event %s, want line 1000's %s", rep.LastEventID, evs[999].EventID)
	}

	rep2, err := replay.Run(t.Context(), bytes.NewReader(set), replay.Options{}, replay.Deps{Writer: w})
	if err != nil || rep2.Published != len(evs) {
		t.Fatalf("second replay: %v, published %d of %d", err, rep2.Published, len(evs))
	}
	want := int64(rep.Published + rep2.Published)
	testkit.WaitForf(t, 60*time.Second, func() string {
		return fmt.Sprintf("consumer at %d of %d messages", c.Metrics.Consumed.Load(), want)
	}, func() bool { return c.Metrics.Consumed.Load() >= want })
	if got := countRows(t, db); got != int64(distinct) {
		t.Errorf("%d rows, want %d (distinct ids)", got, distinct)
	}
}

// TestReplayCorruptLine replays a file with a corrupt line: the rest is published and the bad
// line is reported by number.
func TestReplayCorruptLine(t *testing.T) {
	t.Parallel()
	set := firstLines(practiceBytes(t), 50)
	lines := bytes.SplitAfter(set, []byte("\n"))
	var file []byte
	for i, l := range lines {
		if i == 20 {
			file = append(file, []byte(`{"event_id":"not-a-uuid","event_type":"listing_opened"}`+"\n")...)
		}
		file = append(file, l...)
	}
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Topic(t, addr, 3)
	rep, err := replay.Run(t.Context(), bytes.NewReader(file), replay.Options{}, replay.Deps{Writer: newWriter(t, addr, topic)})
	if err != nil {
		t.Fatalf("replay: %v (invalid lines must not fail the run)", err)
	}
	if rep.Invalid != 1 || len(rep.InvalidLines) != 1 || rep.InvalidLines[0].Line != 21 {
		t.Fatalf("invalid %d lines %+v, want line 21", rep.Invalid, rep.InvalidLines)
	}
	if !errors.Is(rep.InvalidLines[0].Err, events.ErrMalformed) {
		t.Errorf("line 21's error %v does not wrap events.ErrMalformed", rep.InvalidLines[0].Err)
	}
	if rep.Published != 50 || rep.Read != 51 {
		t.Errorf("published %d of %d lines read, want 50 of 51", rep.Published, rep.Read)
	}
	if got := endOffsets(t, addr, topic); got != 50 {
		t.Errorf("topic holds %d messages, want 50", got)
	}
}
