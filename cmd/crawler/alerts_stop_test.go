package main

import (
	"bytes"
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// signalWriter is a log that closes a channel once a line with a given text was written.
type signalWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	text string
	seen chan struct{}
}

func newSignalWriter(text string) *signalWriter {
	return &signalWriter{text: text, seen: make(chan struct{})}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if w.seen != nil && strings.Contains(w.buf.String(), w.text) {
		close(w.seen)
		w.seen = nil
	}
	return n, err
}

func (w *signalWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestSIGTERMDuringASendMarksItSent: SIGTERM (ctx cancelled) while a message is in flight; the
// channel answers 200 after it. `crawler once` waits (up to --alert-wait) for that answer and marks
// the claim sent, so the next run sends nothing again: on the webhook (which would be sent again
// under its key) and on Slack (which would be left unknown).
func TestSIGTERMDuringASendMarksItSent(t *testing.T) {
	t.Parallel()
	for _, typ := range []string{"webhook", "slack"} {
		t.Run(typ, func(t *testing.T) {
			t.Parallel()
			site := teePage(t, func() []teeRow { return []teeRow{{"12/20", "07:00", 120000}} })
			ctx, sigterm := context.WithCancel(t.Context())
			defer sigterm()
			log := newSignalWriter("alerts: stopping")
			var abandoned bool
			rc := newReceiver(t, func(n int, _ http.ResponseWriter, r *http.Request) bool {
				if n > 1 {
					return false
				}
				sigterm()
				select {
				case <-r.Context().Done(): // the crawler gave up on the request
					abandoned = true
					return true
				case <-log.seen: // the crawler is stopping and still waits for this answer
					return false
				}
			})
			channel := "    type: webhook\n    url: " + rc.srv.URL + "/alerts\n"
			if typ == "slack" {
				channel = "    type: slack\n    url_env: SLACK_URL\n    base_url: " + rc.srv.URL + "\n"
			}
			watches := testkit.WriteTemp(t, "watches.yaml", "channels:\n  c:\n"+channel+"    timeout: 30s\nwatches:\n  - name: all\n    channels: [c]\n")
			state := filepath.Join(t.TempDir(), "state")
			e := env(map[string]string{"KAFKA_BOOTSTRAP": "", "LOG_FORMAT": "text", "SLACK_URL": "https://hooks.slack.com/services/T0/B0/x"})
			args := []string{"once", "--sites", teeSitesFile(t, site.URL), "--watches", watches, "--state-dir", state, "--alert-wait", "30s"}
			var out bytes.Buffer
			_ = run(ctx, args, e, &out, log) // the crawl may end cancelled: the exit status is not the point
			if abandoned {
				t.Errorf("the crawler abandoned the request in flight at SIGTERM")
			}
			var again bytes.Buffer
			if err := run(t.Context(), args, e, &out, &again); err != nil {
				t.Fatalf("second once: %v\n%s", err, tail(again.String()))
			}
			var list, errOut bytes.Buffer
			if err := run(t.Context(), []string{"notifications", "--state-dir", state}, e, &list, &errOut); err != nil {
				t.Fatal(err)
			}
			requests, _ := rc.count()
			if requests != 1 || strings.Count(list.String(), " sent ") != 1 {
				t.Errorf("%d requests over the stop and the next run, claims:\n%s\nwant 1 request, sent\nfirst run:\n%s",
					requests, list.String(), tail(log.String()))
			}
		})
	}
}
