package notify

import (
	"time"

	"github.com/google/uuid"
)

// Notification is one claim, as listed (ClaimStore.List).
type Notification struct {
	Key        uuid.UUID `json:"key"`
	Watch      string    `json:"watch"`
	Channel    string    `json:"channel"`
	EventID    uuid.UUID `json:"event_id"`
	CrawlID    string    `json:"crawl_id"`
	EventType  string    `json:"event_type"`
	Course     string    `json:"course_name"`
	CoursePart string    `json:"course_part,omitempty"`
	PriceKRW   *int64    `json:"price_krw,omitempty"`
	// PreviousPriceKRW is a change's old price.
	PreviousPriceKRW *int64     `json:"previous_price_krw,omitempty"`
	PlayDate         string     `json:"play_date"`
	TeeTime          string     `json:"tee_time"`
	OccurredAt       time.Time  `json:"occurred_at"`
	Status           string     `json:"status"`
	Reason           string     `json:"reason,omitempty"`
	Error            string     `json:"error,omitempty"`
	Attempts         int        `json:"attempts"`
	ClaimedAt        time.Time  `json:"claimed_at"`
	SentAt           *time.Time `json:"sent_at,omitempty"`
}

// Statuses are the values of a claim's status.
var Statuses = []string{string(StatusSending), string(StatusPending), string(StatusSent), string(StatusFailed), string(StatusUnknown),
	string(StatusSkipped), string(StatusWithheld)}
