package retry

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestDelayDoublesWithinBoundsUpToMax(t *testing.T) {
	t.Parallel()
	b := Backoff{Base: 100 * time.Millisecond, Max: time.Second}
	for _, tc := range []struct {
		attempt int
		full    time.Duration
	}{{1, 100 * time.Millisecond}, {2, 200 * time.Millisecond}, {4, 800 * time.Millisecond}, {5, time.Second}, {60, time.Second}} {
		for range 200 {
			if d := b.Delay(tc.attempt); d < tc.full/2 || d > tc.full {
				t.Fatalf("Delay(%d) = %v, want within [%v, %v]", tc.attempt, d, tc.full/2, tc.full)
			}
		}
	}
	if d := (Backoff{}).Delay(3); d != 0 {
		t.Errorf("zero Backoff: Delay = %v, want 0", d)
	}
	if d := (Backoff{Base: time.Second, Max: time.Millisecond}).Delay(1); d < time.Second/2 || d > time.Second {
		t.Errorf("Max below Base: Delay = %v, want within [0.5s, 1s]", d)
	}
}

func TestSleepEndsWithItsContext(t *testing.T) {
	t.Parallel()
	if err := Sleep(t.Context(), time.Millisecond); err != nil {
		t.Fatalf("Sleep(1ms) = %v, want nil", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep on a cancelled context = %v, want context.Canceled", err)
	}
}
