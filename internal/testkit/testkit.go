// Package testkit is the project's shared test kit: a logger into the test's output, a buffer
// safe for concurrent writers, WaitFor (poll until a condition holds, with a timeout, never a
// fixed sleep in its place), Tail, and the event factories the tests draw their events from. The
// Kafka side (Encode, Produce) is in events/kafkabus/kafkatest, the database in store/storetest.
// Only tests import it.
package testkit

import (
	"bufio"
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
)

// Logger is a text logger into t's output at level.
func Logger(t testing.TB, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: level}))
}

// SyncBuffer collects output written from several goroutines (logs, a process's stderr).
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Lines returns the lines containing sub.
func (s *SyncBuffer) Lines(sub string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s.String()))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), sub) {
			out = append(out, sc.Text())
		}
	}
	return out
}

// WaitFor polls cond until it holds, or fails t once timeout has passed ("timed out after
// TIMEOUT waiting for WHAT"). The poll starts at 2 ms and backs off to 200 ms, so a quick
// condition is seen at once and a slow one (a database count) is not asked in a tight loop.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	WaitForf(t, timeout, func() string { return what }, cond)
}

// WaitForf is WaitFor with a description computed when it times out (to say how far it got).
func WaitForf(t testing.TB, timeout time.Duration, what func() string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	poll := 2 * time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what())
		}
		time.Sleep(poll)
		poll = min(2*poll, 200*time.Millisecond)
	}
}

// Tail is the last n bytes of s, marked with "..." when cut.
func Tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// Events returns n distinct valid listing_opened events, 40 tee times per course, observed one
// second apart from at; prefix keeps sets from different calls apart (it names the courses and
// the crawl).
func Events(n int, prefix string, at time.Time) []events.Event {
	out := make([]events.Event, n)
	for i := range out {
		price, players := int64(100000+i), 4
		l := events.Listing{
			Source: "test", CourseName: fmt.Sprintf("%s Course %d", prefix, i/40), RoundDate: "2026-05-01",
			PlayDate: "2026-05-01", TeeTime: fmt.Sprintf("%02d:%02d", 5+(i%40)/4, (i%4)*15),
			Values: events.Values{PriceKRW: &price, Players: &players},
		}
		out[i] = events.Opened(l, "crawl-"+prefix, at.Add(time.Duration(i)*time.Second))
	}
	return out
}

// CrawlEvents returns events from..to-1 of an endless sequence shaped like a crawl's: listings
// of ten events each (an open, then price changes, every 10th listing closed). prefix keeps sets
// apart.
func CrawlEvents(from, to int, prefix string) []events.Event {
	t0 := time.Date(2026, 4, 1, 6, 0, 0, 0, time.UTC)
	out := make([]events.Event, 0, to-from)
	for i := from; i < to; i++ {
		li, j := i/10, i%10
		price, players := int64(100000), 4
		l := events.Listing{
			Source: "bench", CourseName: fmt.Sprintf("%s Course %d", prefix, li%50), CoursePart: "East",
			RoundDate: "05/01", PlayDate: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, li/50%90).Format(events.DateLayout),
			TeeTime: fmt.Sprintf("%02d:%02d", 5+li/4500%14, li/50/90%60), Values: events.Values{PriceKRW: &price, Players: &players},
			URL: "http://bench.invalid/tee",
		}
		at := t0.Add(time.Duration(i) * time.Second)
		crawl := fmt.Sprintf("crawl-%s-%d", prefix, j)
		var e events.Event
		switch {
		case j == 0:
			e = events.Opened(l, crawl, at)
		case j == 9 && li%10 == 0:
			e = events.Closed(l, crawl, at, events.Booked)
		default:
			next := l
			p := price + int64(j*1000)
			next.PriceKRW = &p
			e = events.Changed(l, next, crawl, at)
		}
		out = append(out, e)
	}
	return out
}

// EnvOr returns the value of the first of keys that is set and not empty, else def: how the
// test helpers find the stack (TEST_DATABASE_URL, else DATABASE_URL, else the dev stack's).
func EnvOr(def string, keys ...string) string {
	for _, k := range keys {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	return def
}

// EnvInt returns the positive integer in environment variable key (a benchmark's or the chaos
// suite's size knob), or def when it is unset; anything else fails t.
func EnvInt(t testing.TB, key string, def int) int {
	t.Helper()
	return envPositive(t, key, def, strconv.Atoi, "integer")
}

// EnvDuration is EnvInt for a positive duration ("90s").
func EnvDuration(t testing.TB, key string, def time.Duration) time.Duration {
	t.Helper()
	return envPositive(t, key, def, time.ParseDuration, "duration")
}

func envPositive[T int | time.Duration](t testing.TB, key string, def T, parse func(string) (T, error), what string) T {
	t.Helper()
	s := os.Getenv(key)
	if s == "" {
		return def
	}
	v, err := parse(s)
	if err != nil || v <= 0 {
		t.Fatalf("%s=%q: want a positive %s", key, s, what)
	}
	return v
}
