package sitesim

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

func TestListenAndServe(t *testing.T) {
	t.Parallel()
	addr := testkit.FreeAddr(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- ListenAndServe(ctx, addr, DemoConfig(1), slog.New(slog.NewTextHandler(t.Output(), nil)))
	}()
	deadline := time.Now().Add(5 * time.Second)
	var body []byte
	for {
		resp, err := http.Get("http://" + addr + "/tee?date=" + time.Now().In(KST).Format("20060102") + "&page=1")
		if err == nil {
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("site did not come up on %s within 5 s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(body) == 0 {
		t.Error("empty page")
	}
	cancel()
	testkit.NoErr(t, done, 10*time.Second, "ListenAndServe after cancel")
}
