package replay

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/eventstest"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
)

func TestLineReader(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", events.MaxEventBytes+10)
	tests := []struct {
		name string
		in   string
		want []string // "!" marks errLineTooLong
	}{
		{"Empty", "", nil},
		{"OneNoNewline", "a", []string{"a"}},
		{"CRLF", "a\r\nb\r\n", []string{"a", "b"}},
		{"Blank", "a\n\nb\n", []string{"a", "", "b"}},
		{"TooLongThenMore", "a\n" + long + "\nb", []string{"a", "!", "b"}},
		{"TooLongAtEnd", long, []string{"!"}},
		{"JustUnderLimit", strings.Repeat("y", events.MaxEventBytes) + "\r\n", []string{strings.Repeat("y", events.MaxEventBytes)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			lr := newLineReader(strings.NewReader(tt.in))
			var got []string
			for {
				line, n, err := lr.next()
				if errors.Is(err, io.EOF) {
					break
				}
				if n != len(got)+1 {
					t.Fatalf("line number %d, want %d", n, len(got)+1)
				}
				switch {
				case errors.Is(err, errLineTooLong):
					got = append(got, "!")
				case err != nil:
					t.Fatal(err)
				default:
					got = append(got, string(line))
				}
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Errorf("got %d lines %.40q, want %d %.40q", len(got), got, len(tt.want), tt.want)
			}
			if lr.bytes != int64(len(tt.in)) {
				t.Errorf("bytes %d, want %d", lr.bytes, len(tt.in))
			}
		})
	}
}

// fakeClock is a clock whose sleeps advance it.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }
func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.now = c.now.Add(d)
	return nil
}

func TestLimiter(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{now: time.Unix(0, 0)}
	l := newLimiter(100, 10, clk.Now, clk.Sleep)
	for range 50 {
		if err := l.wait(t.Context(), 10); err != nil {
			t.Fatal(err)
		}
	}
	// 500 tokens at 100/s with a full bucket of 10: 4.9 s.
	if got, want := clk.now.Sub(time.Unix(0, 0)), 4900*time.Millisecond; got < want-time.Millisecond || got > want+time.Millisecond {
		t.Errorf("500 events took %v of simulated time, want %v", got, want)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := l.wait(ctx, 10); !errors.Is(err, context.Canceled) {
		t.Errorf("wait on a cancelled ctx: %v", err)
	}
}

func testEvents(n int) []byte {
	var buf bytes.Buffer
	at := time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC)
	for i := range n {
		price, players := int64(100000), 4
		l := events.Listing{Source: "s", CourseName: "C", RoundDate: "04/20", PlayDate: "2026-04-20",
			TeeTime: "07:00", Values: events.Values{PriceKRW: &price, Players: &players}}
		l.TeeTime = time.Date(2026, 4, 20, 5, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute).Format("15:04")
		b, _ := events.Encode(events.Opened(l, "c1", at.Add(time.Duration(i)*time.Second)))
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// fakeWriter acknowledges everything but the ids in fail, or fails whole batches with err.
type fakeWriter struct {
	fail    map[uuid.UUID]bool
	err     error
	batches []int
	got     []events.Event
}

func (f *fakeWriter) WriteEvents(_ context.Context, evs []events.Event) error {
	f.batches = append(f.batches, len(evs))
	f.got = append(f.got, evs...)
	if f.err != nil {
		return f.err
	}
	werr := &kafkabus.WriteEventsError{Total: len(evs)}
	for _, e := range evs {
		if f.fail[e.EventID] {
			werr.Failed = append(werr.Failed, kafkabus.EventError{EventID: e.EventID, Err: errors.New("nope")})
		}
	}
	if len(werr.Failed) > 0 {
		return werr
	}
	return nil
}

func TestRunPartialFailure(t *testing.T) {
	t.Parallel()
	in := testEvents(25)
	bad, _ := events.Decode(bytes.SplitN(in, []byte("\n"), 8)[6]) // line 7
	w := &fakeWriter{fail: map[uuid.UUID]bool{bad.EventID: true}}
	rep, err := Run(t.Context(), bytes.NewReader(in), Options{BatchSize: 10}, Deps{Writer: w})
	if !errors.Is(err, ErrNotPublished) {
		t.Fatalf("err %v, want ErrNotPublished", err)
	}
	if rep.Published != 24 || rep.Failed != 1 || len(rep.FailedEvents) != 1 || rep.FailedEvents[0].EventID != bad.EventID {
		t.Errorf("published %d failed %d %+v; want 24 and line 7's event", rep.Published, rep.Failed, rep.FailedEvents)
	}
	if rep.LastLine != 25 {
		t.Errorf("last line %d, want 25", rep.LastLine)
	}
	if got := w.batches; len(got) != 3 || got[0] != 10 || got[2] != 5 {
		t.Errorf("batches %v, want [10 10 5]", got)
	}
}

func TestRunGivesUp(t *testing.T) {
	t.Parallel()
	w := &fakeWriter{err: errors.New("broker down")}
	rep, err := Run(t.Context(), bytes.NewReader(testEvents(100)), Options{BatchSize: 10}, Deps{Writer: w})
	if !errors.Is(err, ErrNotPublished) || !strings.Contains(err.Error(), "gave up") {
		t.Fatalf("err %v, want ErrNotPublished saying it gave up", err)
	}
	if len(w.batches) != maxWholeBatchFailures || rep.Failed != 10*maxWholeBatchFailures || rep.Published != 0 {
		t.Errorf("%d batches, %d failed, %d published; want %d batches of 10 failed", len(w.batches), rep.Failed, rep.Published, maxWholeBatchFailures)
	}
}

func TestRunRateBatches(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{now: time.Unix(0, 0)}
	w := &fakeWriter{}
	rep, err := Run(t.Context(), bytes.NewReader(testEvents(100)), Options{Rate: 50}, Deps{Writer: w, Now: clk.Now, Sleep: clk.Sleep})
	if err != nil || rep.Published != 100 {
		t.Fatalf("%v, published %d", err, rep.Published)
	}
	// Batches of Rate/10 = 5; the first 5 are free, the other 95 take 1.9 s.
	if len(w.batches) != 20 || w.batches[0] != 5 {
		t.Errorf("batches %v, want 20 of 5", w.batches)
	}
	if got := clk.now.Sub(time.Unix(0, 0)); got < 1900*time.Millisecond-time.Millisecond {
		t.Errorf("100 events at 50/s took %v of simulated time, want ≥ 1.9s", got)
	}
}

func TestRunEmptyWindow(t *testing.T) {
	t.Parallel()
	at := time.Now()
	if _, err := Run(t.Context(), strings.NewReader(""), Options{Since: at, Until: at, DryRun: true}, Deps{}); err == nil {
		t.Error("an empty window must be refused")
	}
	if _, err := Run(t.Context(), strings.NewReader(""), Options{}, Deps{}); err == nil {
		t.Error("no writer without DryRun must be refused")
	}
}

func TestProgress(t *testing.T) {
	t.Parallel()
	in := testEvents(30)
	for _, terminal := range []bool{false, true} {
		clk := &fakeClock{now: time.Unix(0, 0)}
		now := func() time.Time { clk.now = clk.now.Add(100 * time.Millisecond); return clk.now }
		var out bytes.Buffer
		_, err := Run(t.Context(), bytes.NewReader(in), Options{BatchSize: 5},
			Deps{Writer: &fakeWriter{}, Progress: &out, Terminal: terminal, Size: int64(len(in)), Now: now})
		if err != nil {
			t.Fatal(err)
		}
		s := out.String()
		switch {
		case terminal && (!strings.Contains(s, "\r[") || !strings.Contains(s, "100%") || !strings.Contains(s, "ETA")):
			t.Errorf("terminal progress %q lacks a bar, 100%% or ETA", s)
		case !terminal && (!strings.HasPrefix(s, "replay: ") || strings.Contains(s, "\r") || !strings.Contains(s, "30 published")):
			t.Errorf("plain progress %q: want lines starting 'replay: ', no \\r, ending with 30 published", s)
		}
	}
}

// TestLastLineOfAnIDWins: an events file written before the commit rule can hold one event_id
// with two contents (a failed save's line, then the re-derived one). The consumer keeps the first
// row it gets, so replay publishes only the last line of an id, and the dry run names the ids.
func TestLastLineOfAnIDWins(t *testing.T) {
	t.Parallel()
	evs := eventstest.Events(2, "pd", time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	e, other := evs[0], evs[1]
	stale, fresh := e, e
	p1, p2 := int64(200000), int64(140000)
	stale.PriceKRW, fresh.PriceKRW = &p1, &p2
	var file bytes.Buffer
	for _, ev := range []events.Event{stale, other, fresh} {
		b, err := events.Encode(ev)
		if err != nil {
			t.Fatal(err)
		}
		file.Write(append(b, '\n'))
	}
	dry, err := Run(context.Background(), bytes.NewReader(file.Bytes()), Options{DryRun: true}, Deps{})
	if err != nil {
		t.Fatal(err)
	}
	if dry.TwoContentIDs != 1 || len(dry.TwoContents) != 1 || dry.TwoContents[0] != e.EventID || dry.Superseded != 1 {
		t.Errorf("dry run: two contents %d %v superseded %d, want %s named once", dry.TwoContentIDs, dry.TwoContents, dry.Superseded, e.EventID)
	}
	w := &fakeWriter{}
	rep, err := Run(context.Background(), bytes.NewReader(file.Bytes()), Options{}, Deps{Writer: w})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Published != 2 || len(w.got) != 2 || *w.got[1].PriceKRW != 140000 {
		t.Fatalf("published %d: %+v, want other then the 140000 line", rep.Published, w.got)
	}
}
