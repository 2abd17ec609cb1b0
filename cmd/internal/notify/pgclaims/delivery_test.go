package pgclaims_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/pgclaims"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// countingReceiver answers with respond and counts the requests it got, by "METHOD path".
type countingReceiver struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen map[string]int
	idem map[string]int
}

func newCountingReceiver(t *testing.T, respond func(w http.ResponseWriter, r *http.Request)) *countingReceiver {
	c := &countingReceiver{seen: map[string]int{}, idem: map[string]int{}}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.seen[r.Method+" "+r.URL.Path]++
		c.idem[r.Header.Get("Idempotency-Key")]++
		c.mu.Unlock()
		respond(w, r)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *countingReceiver) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.seen {
		n += v
	}
	return n
}

// hang reads the request and never answers: the client times out after sending it. (Reading
// the body lets the server notice the client's close and cancel r's context.)
func hang(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	<-r.Context().Done()
}

type row struct {
	status, errText string
	attempts        int
}

// deliverOne claims one opening for watch w on channel c (channelYAML) and runs the sender until
// the claim is no longer sending; it returns the claim's row.
func deliverOne(t *testing.T, channelYAML string, maxAttempts int) row {
	t.Helper()
	db := storetest.NewDB(t)
	cfg, err := notify.Parse([]byte("channels:\n  c: "+channelYAML+"\nwatches:\n  - name: w\n    channels: [c]\n"),
		func(string) string { return "http://127.0.0.1:1/services/T0/B0/sEcReT" })
	if err != nil {
		t.Fatal(err)
	}
	st := &pgclaims.Store{Pool: db, Owner: "test", Settle: time.Millisecond}
	c := &claimer{Store: st, Config: cfg}
	if res, err := c.Ingest(t.Context(), msgs(events.Opened(listing("레이크 CC"), "crawl-1", time.Now()))); err != nil || res.Inserted != 1 {
		t.Fatalf("claim: %d, %v", res.Inserted, err)
	}
	s := &notify.Sender{Store: st, Channel: cfg.Channels["c"], MaxAttempts: maxAttempts,
		BackoffBase: time.Millisecond, BackoffMax: time.Millisecond, Logger: testkit.Logger(t, 0)}
	var r row
	testkit.WaitFor(t, 30*time.Second, "the claim finished", func() bool {
		if _, err := s.Once(t.Context()); err != nil {
			t.Fatal(err)
		}
		err := db.QueryRow(t.Context(), "select status, coalesce(error, ''), attempts from notifications").Scan(&r.status, &r.errText, &r.attempts)
		if err != nil {
			t.Fatal(err)
		}
		return r.status != "sending"
	})
	return r
}

// TestChatChannelTimeoutAfterSendIsUnknownNotResent: a chat channel (no idempotency
// key) that got the request and did not answer within its timeout may have posted it: the claim
// becomes unknown after one request, never re-sent. The webhook retries under its Idempotency-Key,
// and a request that never left (connection refused) is retried on every channel.
func TestChatChannelTimeoutAfterSendIsUnknownNotResent(t *testing.T) {
	t.Parallel()
	for _, typ := range []string{"slack", "discord", "telegram", "webhook"} {
		t.Run(typ, func(t *testing.T) {
			t.Parallel()
			recv := newCountingReceiver(t, hang)
			r := deliverOne(t, chatChannel(typ, recv.srv.URL, "timeout: 100ms"), 3)
			want, wantRequests := "unknown", 1
			if typ == "webhook" {
				want, wantRequests = "failed", 3
			}
			if r.status != want || recv.total() != wantRequests || len(recv.idem) != 1 {
				t.Errorf("%s: status %s after %d requests (%d keys; %d attempts, %q), want %s after %d",
					typ, r.status, recv.total(), len(recv.idem), r.attempts, r.errText, want, wantRequests)
			}
			if !strings.Contains(r.errText, "no answer within 100ms") || strings.Contains(r.errText, "sEcReT") {
				t.Errorf("%s: error %q", typ, r.errText)
			}
		})
		t.Run(typ+"/refused", func(t *testing.T) {
			t.Parallel()
			r := deliverOne(t, chatChannel(typ, "http://"+refusedAddr(t), "timeout: 1s"), 3)
			if r.status != "failed" || r.attempts != 3 || !strings.Contains(r.errText, "refused") {
				t.Errorf("%s refused: %+v, want failed after 3 attempts", typ, r)
			}
		})
	}
}

// chatChannel is a channel of type typ whose requests go to base.
func chatChannel(typ, base, extra string) string {
	switch typ {
	case "webhook":
		return fmt.Sprintf("{type: webhook, url: %s/hook, %s}", base, extra)
	case "telegram":
		return fmt.Sprintf("{type: telegram, token_env: TG_TOKEN, chat_id: \"1\", base_url: %s, %s}", base, extra)
	default:
		return fmt.Sprintf("{type: %s, url_env: URL, base_url: %s, %s}", typ, base, extra)
	}
}

// refusedAddr is a 127.0.0.1 address nobody listens on.
func refusedAddr(t *testing.T) string {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.Listener.Addr().String()
	srv.Close()
	return addr
}

// TestRedirectFailsTheDeliveryPermanently: a webhook answering 302 is not followed
// with a bodiless GET (whose 200 marked the alert sent): the claim fails at once, naming the status.
func TestRedirectFailsTheDeliveryPermanently(t *testing.T) {
	t.Parallel()
	for _, code := range []int{301, 302, 303, 307, 308} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			t.Parallel()
			recv := newCountingReceiver(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/landing" {
					return // 200
				}
				http.Redirect(w, r, "/landing", code)
			})
			r := deliverOne(t, chatChannel("webhook", recv.srv.URL, "timeout: 5s"), 3)
			if r.status != "failed" || r.attempts != 1 || !strings.Contains(r.errText, fmt.Sprintf("HTTP %d", code)) ||
				!strings.Contains(r.errText, "redirect") {
				t.Errorf("%d: %+v, want failed after 1 attempt naming the status and the redirect", code, r)
			}
			recv.mu.Lock()
			defer recv.mu.Unlock()
			if recv.seen["POST /hook"] != 1 || recv.seen["GET /landing"]+recv.seen["POST /landing"] != 0 {
				t.Errorf("%d: requests %v, want one POST /hook and nothing else", code, recv.seen)
			}
		})
	}
}
