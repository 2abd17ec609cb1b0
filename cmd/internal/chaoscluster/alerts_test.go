//go:build cluster

package chaoscluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// alerts is the notifier side: one booking-consumer notify process in a group of its own, with a
// webhook watch of every opening, and the webhook receiver counting each event_id it was sent.
type alerts struct {
	t     *testing.T
	args  []string
	proc  *testkit.Proc
	exits int
	mu    sync.Mutex
	got   map[uuid.UUID]int // event_id -> deliveries at the webhook
}

// startAlerts starts the receiver and the notifier (with the top test's t, like the consumers).
func startAlerts(t *testing.T, bin, dbURL string, brokers []string, topic, group string) *alerts {
	a := &alerts{t: t, got: map[uuid.UUID]int{}}
	srv := httptest.NewServer(http.HandlerFunc(a.receive))
	t.Cleanup(srv.Close)
	watches := filepath.Join(t.TempDir(), "watches.yaml")
	yaml := fmt.Sprintf("channels:\n  hook: {type: webhook, url: %q}\nwatches:\n  - name: openings\n    channels: [hook]\n", srv.URL+"/alerts")
	if err := os.WriteFile(watches, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	// --max-age: the simulated site's clock runs 600x, so its events look months old.
	a.args = []string{"notify", "--database-url", dbURL, "--kafka-bootstrap", strings.Join(brokers, ","),
		"--topic", topic, "--group", group, "--watches", watches, "--metrics-addr=", "--no-migrate",
		"--create-partitions", "0", "--max-age", "87600h", "--retry-backoff", "100ms"}
	a.proc = testkit.Start(t, bin, []string{"LOG_LEVEL=info"}, a.args...)
	return a
}

func (a *alerts) receive(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Matches []struct {
			EventID uuid.UUID `json:"event_id"`
		} `json:"matches"`
	}
	b, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(b, &body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	for _, m := range body.Matches {
		a.got[m.EventID]++
	}
	a.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// keepAlive restarts the notifier if it exited on its own.
func (a *alerts) keepAlive(t *testing.T) {
	select {
	case err := <-a.proc.Exited:
		a.proc.Exited <- err
		a.exits++
		t.Logf("notifier exited on its own (%v); restarting it. Last logs:\n%s", err, testkit.Tail(a.proc.Logs.String(), 1500))
		a.proc = testkit.Start(a.t, a.proc.Cmd.Path, []string{"LOG_LEVEL=info"}, a.args...)
	default:
	}
}

func (a *alerts) deliveries(id uuid.UUID) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.got[id]
}

// claims is the notifications rows of ids: event_id -> status[:reason].
func claims(t *testing.T, db *pgxpool.Pool, ids []uuid.UUID) map[uuid.UUID]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), time.Minute)
	defer cancel()
	rows, err := db.Query(ctx, "select event_id, status || coalesce(':' || reason, '') from notifications where event_id = any($1)", ids)
	if err != nil {
		t.Fatal(err)
	}
	out := map[uuid.UUID]string{}
	var id uuid.UUID
	var st string
	if _, err := pgx.ForEachRow(rows, []any{&id, &st}, func() error { out[id] = st; return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// check waits until every stored opening among ids is claimed and no claim is still sending, then
// checks the webhook: each sent claim delivered once (twice at most, the documented crash window),
// nothing else delivered. It returns a one-line account.
func (a *alerts) check(t *testing.T, db *pgxpool.Pool, ids []uuid.UUID, keepAlive func()) string {
	t.Helper()
	openings := openingIDs(t, db, ids)
	var cl map[uuid.UUID]string
	testkit.WaitForf(t, 5*time.Minute, func() string {
		return fmt.Sprintf("every opening claimed (%d openings, %d claims) and none still sending; notifier logs:\n%s",
			len(openings), len(cl), testkit.Tail(a.proc.Logs.String(), 1500))
	}, func() bool {
		keepAlive()
		a.keepAlive(t)
		cl = claims(t, db, ids)
		for _, st := range cl {
			if st == "sending" {
				return false
			}
		}
		for _, id := range openings {
			if _, ok := cl[id]; !ok {
				return false
			}
		}
		return true
	})
	statuses, twice := map[string]int{}, 0
	for id, st := range cl {
		statuses[st]++
		switch n := a.deliveries(id); {
		case st == "sent" && n == 2:
			twice++
		case st == "sent" && n != 1:
			t.Errorf("event %s: claim sent, delivered %d times at the webhook", id, n)
		case st != "sent" && n != 0:
			t.Errorf("event %s: claim %s, yet delivered %d times", id, st, n)
		}
		if strings.HasPrefix(st, "failed") {
			t.Errorf("event %s: claim failed though the webhook answers 200", id)
		}
	}
	for _, id := range ids {
		if _, claimed := cl[id]; !claimed && a.deliveries(id) > 0 {
			t.Errorf("event %s delivered without a claim", id)
		}
	}
	return fmt.Sprintf("%d openings stored, %d claims %v, %d delivered twice, notifier exits %d", len(openings), len(cl), statuses, twice, a.exits)
}

// openingIDs is the listing_opened events among ids that are stored.
func openingIDs(t *testing.T, db *pgxpool.Pool, ids []uuid.UUID) []uuid.UUID {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), time.Minute)
	defer cancel()
	rows, err := db.Query(ctx, "select event_id from booking_events where event_id = any($1) and event_type = 'listing_opened'", ids)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		t.Fatal(err)
	}
	return out
}
