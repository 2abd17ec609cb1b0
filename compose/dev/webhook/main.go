// Command webhook is the demo's alert receiver (compose/dev/demo): a local generic webhook that
// prints every notification it gets, and says when an Idempotency-Key repeats (a receiver that
// deduplicates by it, as a real one should, would drop that delivery).
//
//	go run ./compose/dev/webhook [--addr 127.0.0.1:8099]
//
// It answers 200 to POST /alerts, 200 to GET /healthz, and exits on SIGINT or SIGTERM.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8099", "listen address")
	flag.Parse()
	var mu sync.Mutex
	seen := map[string]bool{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("POST /alerts", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		key := r.Header.Get("Idempotency-Key")
		mu.Lock()
		dup := seen[key]
		seen[key] = true
		mu.Unlock()
		var body struct {
			Watch   string `json:"watch"`
			Text    string `json:"text"`
			Matches []any  `json:"matches"`
		}
		_ = json.Unmarshal(b, &body)
		note := ""
		if dup {
			note = " (repeated Idempotency-Key: a deduplicating receiver drops it)"
		}
		fmt.Printf("%s webhook: watch %s, %d match(es), key %s%s\n%s\n\n", time.Now().Format("15:04:05"),
			body.Watch, len(body.Matches), key, note, body.Text)
		w.WriteHeader(http.StatusOK)
	})
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	fmt.Fprintf(os.Stderr, "webhook: listening on http://%s/alerts\n", *addr)
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, "webhook:", err)
		os.Exit(1)
	}
}
