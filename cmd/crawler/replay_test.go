package main

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/practice"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// replayFile writes a short practice set with a corrupt line 3 and returns its path and the
// number of valid lines.
func replayFile(t *testing.T) (string, int) {
	t.Helper()
	var buf bytes.Buffer
	if _, err := practice.Generate(t.Context(), &buf, practice.Options{Days: 1, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(buf.String(), "\n")
	lines = lines[:len(lines)-1] // the empty string after the last "\n"
	file := strings.Join(lines[:2], "") + "{not json\n" + strings.Join(lines[2:], "")
	return testkit.WriteTemp(t, "events.jsonl", file), len(lines)
}

func TestRunReplayDryRun(t *testing.T) {
	t.Parallel()
	p, n := replayFile(t)
	var stdout, stderr bytes.Buffer
	err := runReplay(t.Context(), []string{p, "--dry-run"}, func(string) string { return "" }, &stdout, &stderr)
	if err != nil {
		t.Fatalf("dry run: %v (%s)", err, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"dry run", "invalid:    1", "invalid line 3:", "already stored: unknown"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "selected:   "+strconv.Itoa(n)) {
		t.Errorf("report does not select %d events:\n%s", n, out)
	}
}

func TestRunReplayPublishes(t *testing.T) {
	t.Parallel()
	p, _ := replayFile(t)
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Topic(t, addr, 3)
	env := map[string]string{"KAFKA_BOOTSTRAP": addr, "KAFKA_TOPIC": topic}
	var stdout, stderr bytes.Buffer
	err := runReplay(t.Context(), []string{"--max", "7", "--batch-size", "3", p}, func(k string) string { return env[k] }, &stdout, &stderr)
	if err != nil {
		t.Fatalf("replay: %v (%s)", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "published:  7") {
		t.Errorf("report:\n%s", stdout.String())
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if got, err := kafkatest.EndOffsets(ctx, addr, topic); err != nil || got != 7 {
		t.Errorf("topic holds %d messages (%v), want 7", got, err)
	}
}

// A topic that does not exist: replay says it is waiting, then gives up with a message that says
// what to do, having published nothing.
func TestRunReplayWaitsForTheTopic(t *testing.T) {
	t.Parallel()
	p, _ := replayFile(t)
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Name(t, "absent")
	env := map[string]string{"KAFKA_BOOTSTRAP": addr, "KAFKA_TOPIC": topic}
	var stdout, stderr bytes.Buffer
	err := runReplay(t.Context(), []string{"--topic-wait", "700ms", p}, func(k string) string { return env[k] }, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), topic) || !strings.Contains(err.Error(), "start booking-consumer run") {
		t.Fatalf("replay to a missing topic: %v, want an error naming it and saying what to do", err)
	}
	if !strings.Contains(stderr.String(), "waiting up to 700ms for topic "+topic) {
		t.Errorf("stderr does not say it waits for the topic:\n%s", stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("a report was printed although nothing was read:\n%s", stdout.String())
	}
}
