package notify

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"
)

// Defaults of the notifier.
const (
	DefaultMaxAge      = 30 * time.Minute
	DefaultMaxAttempts = 6
	// DefaultRetention is how long sent and skipped claims are kept (ClaimStore.Prune).
	DefaultRetention = 30 * 24 * time.Hour
)

// keySpace is the uuid v5 namespace of claim keys.
var keySpace = uuid.MustParse("6f1d0c1e-8a55-4c0b-9a0e-6b1f7a3c2d15")

// ClaimKey is the stable key of (watch, channel, event): the notifications primary key and the
// Idempotency-Key of a message carrying that one notification.
func ClaimKey(watch, channel string, eventID uuid.UUID) uuid.UUID {
	return uuid.NewSHA1(keySpace, []byte(watch+"\x00"+channel+"\x00"+eventID.String()))
}

// Intake claims batches into a store, counts them and wakes the senders of the channels that got
// new claims: the one claim path of both the Kafka consumer and the crawler.
type Intake struct {
	Store   ClaimStore
	Metrics *Metrics
	Logger  *slog.Logger
	// Wake is called after a commit with the channels that got new claims; may be nil.
	Wake func(channels []string)
}

// Claim claims b in one transaction of the store and returns how many claims it created sending.
func (in *Intake) Claim(ctx context.Context, b ClaimBatch) (int, error) {
	if len(b.Claims) == 0 && len(b.Closes) == 0 && len(b.Fingerprints) == 0 {
		return 0, nil
	}
	created, err := in.Store.Claim(ctx, b)
	if err != nil {
		return 0, fmt.Errorf("claim %d matches: %w", len(b.Claims), err)
	}
	claimed, skipped := 0, 0
	var woken []string
	for _, c := range created {
		if c.Status == StatusSending {
			claimed++
			if !slices.Contains(woken, c.Channel) {
				woken = append(woken, c.Channel)
			}
		} else {
			skipped++
			in.Metrics.skipped(c.Reason, 1)
		}
	}
	in.Metrics.claimed(claimed)
	if len(woken) > 0 && in.Wake != nil {
		in.Wake(woken)
	}
	if in.Logger != nil && (claimed > 0 || skipped > 0) {
		in.Logger.InfoContext(ctx, "claimed matches", "claimed", claimed, "skipped", skipped, "matches", len(b.Claims))
	}
	return claimed, nil
}
