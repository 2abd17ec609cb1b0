package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/replay"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// pyCounts is compose/dev/consume-events.py's output.
type pyCounts struct {
	Messages    int            `json:"messages"`
	CloudEvents int            `json:"cloudevents"`
	Duplicates  int            `json:"duplicates"`
	Invalid     int            `json:"invalid"`
	Events      int            `json:"events"`
	ByType      map[string]int `json:"by_type"`
	ListingKeys int            `json:"listing_keys"`
}

// TestPythonConsumerReadsThePracticeReplay: a consumer in another language reads the contract as
// published. The practice set is replayed (its first lines twice, so the topic holds duplicates)
// and the real consumer stores it; compose/dev/consume-events.py (confluent-kafka and jsonschema
// from PyPI, in the venv compose/dev/pyenv makes) reads the same topic, validates every message
// against events/schema, checks its CloudEvents headers (every replayed message has them) and
// deduplicates by ce_id. Its counts must be booking_events': events by event_type and distinct
// listing keys.
func TestPythonConsumerReadsThePracticeReplay(t *testing.T) {
	t.Parallel()
	root := testkit.ModuleRoot(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	env := exec.CommandContext(ctx, filepath.Join(root, "compose", "dev", "pyenv"))
	var stderr bytes.Buffer
	env.Stderr = &stderr
	out, err := env.Output()
	if err != nil {
		t.Fatalf("compose/dev/pyenv: %v\n%s", err, stderr.String())
	}
	python := strings.TrimSpace(string(out))

	set := practiceBytes(t)
	again := firstLines(set, 300)
	sent := len(decodeAll(t, set)) + len(decodeAll(t, again))
	addr, topic, db, c, w := replayPipeline(t)
	for _, b := range [][]byte{set, again} {
		if _, err := replay.Run(t.Context(), bytes.NewReader(b), replay.Options{}, replay.Deps{Writer: w, Logger: testkit.Logger(t, slog.LevelWarn)}); err != nil {
			t.Fatal(err)
		}
	}
	testkit.WaitForf(t, 60*time.Second, func() string {
		return fmt.Sprintf("consumer at %d of %d messages", c.Metrics.Consumed.Load(), sent)
	}, func() bool { return c.Metrics.Consumed.Load() >= int64(sent) })

	stderr.Reset()
	cmd := exec.CommandContext(ctx, python, filepath.Join(root, "compose", "dev", "consume-events.py"), "--bootstrap", addr, "--topic", topic)
	cmd.Stderr = &stderr
	start := time.Now()
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("consume-events.py: %v\n%s%s", err, out, stderr.String())
	}
	t.Logf("consume-events.py in %v: %s", time.Since(start).Round(time.Millisecond), out)
	var py pyCounts
	if err := json.Unmarshal(out, &py); err != nil {
		t.Fatalf("consume-events.py printed %q: %v", out, err)
	}

	want := pyCounts{Messages: sent, CloudEvents: sent, ByType: map[string]int{}}
	rows, err := db.Query(t.Context(), "select event_type, count(*) from booking_events group by event_type")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var typ string
		var n int
		if err := rows.Scan(&typ, &n); err != nil {
			t.Fatal(err)
		}
		want.ByType[typ] = n
		want.Events += n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(t.Context(), "select count(distinct listing_key) from booking_events").Scan(&want.ListingKeys); err != nil {
		t.Fatal(err)
	}
	want.Duplicates = sent - want.Events
	if fmt.Sprint(py) != fmt.Sprint(want) {
		t.Errorf("the Python consumer counted %+v,\nbooking_events says %+v", py, want)
	}
}
