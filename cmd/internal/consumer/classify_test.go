package consumer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/store"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	live := t.Context()
	done, cancel := context.WithCancel(t.Context())
	cancel()
	transient := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET} // a connection reset
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		want outcome
	}{
		{"SuccessCommits", live, nil, commit},
		{"SuccessDuringShutdownCommits", done, nil, commit},
		{"TransientRetries", live, transient, retry},
		{"DeadlineRetries", live, fmt.Errorf("insert: %w", context.DeadlineExceeded), retry},
		// A whole batch rejected (the store pins rejections on rows; this one it could not) and an
		// error nobody classified are retried too, but loudly.
		{"RejectedBatchRetriesLoudly", live, fmt.Errorf("%w: boom", store.ErrRejected), alarm},
		{"UnknownRetriesLoudly", live, errors.New("???"), alarm},
		{"ShutdownStops", done, transient, stop},
		{"CancelledInsertStops", done, context.Canceled, stop},
		{"RejectedDuringShutdownStops", done, store.ErrRejected, stop},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := classify(tc.ctx, tc.err); got != tc.want {
				t.Errorf("classify(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

func TestBackoffDelay(t *testing.T) {
	t.Parallel()
	b := Backoff{Base: 200 * time.Millisecond, Max: 30 * time.Second}
	for _, tc := range []struct {
		attempt int
		lo, hi  time.Duration
	}{
		{1, 100 * time.Millisecond, 200 * time.Millisecond},
		{2, 200 * time.Millisecond, 400 * time.Millisecond},
		{5, 1600 * time.Millisecond, 3200 * time.Millisecond},
		{8, 12800 * time.Millisecond, 25600 * time.Millisecond},
		{9, 15 * time.Second, 30 * time.Second},
		{1000, 15 * time.Second, 30 * time.Second},
	} {
		for range 50 {
			if d := b.Delay(tc.attempt); d < tc.lo || d > tc.hi {
				t.Fatalf("Delay(%d) = %v, want in [%v, %v]", tc.attempt, d, tc.lo, tc.hi)
			}
		}
	}
}
