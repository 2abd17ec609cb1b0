// Package testkit is the project's shared test kit: a logger into the test's output, a buffer
// safe for concurrent writers, WaitFor (poll until a condition holds, with a timeout, never a
// fixed sleep in its place), Tail, child processes, black-holed brokers and env knobs. It imports
// no package of the project, like every package under internal/ (depguard): the events tests
// draw from are made and read by events/eventstest, the Kafka side (Encode, Produce) is in
// events/kafkabus/kafkatest, the database in store/storetest. Only tests import it.
package testkit

import (
	"bufio"
	"bytes"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
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
