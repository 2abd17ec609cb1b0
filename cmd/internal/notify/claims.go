package notify

import (
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
