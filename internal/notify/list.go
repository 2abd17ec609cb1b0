package notify

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed queries/list.sql
var listSQL string

// Notification is one row of the notifications table, as listed.
type Notification struct {
	Key        uuid.UUID  `json:"key"`
	Watch      string     `json:"watch"`
	Channel    string     `json:"channel"`
	EventID    uuid.UUID  `json:"event_id"`
	CrawlID    string     `json:"crawl_id"`
	EventType  string     `json:"event_type"`
	Course     string     `json:"course_name"`
	PlayDate   string     `json:"play_date"`
	TeeTime    string     `json:"tee_time"`
	OccurredAt time.Time  `json:"occurred_at"`
	Status     string     `json:"status"`
	Reason     string     `json:"reason,omitempty"`
	Error      string     `json:"error,omitempty"`
	Attempts   int        `json:"attempts"`
	ClaimedAt  time.Time  `json:"claimed_at"`
	SentAt     *time.Time `json:"sent_at,omitempty"`
}

// Statuses are the values of notifications.status.
var Statuses = []string{"sending", "sent", "failed", "unknown", "skipped"}

// List returns up to limit notifications, newest claim first, filtered by status and watch ("" =
// any).
func List(ctx context.Context, pool *pgxpool.Pool, status, watch string, limit int) ([]Notification, error) {
	rows, err := pool.Query(ctx, listSQL, status, watch, limit)
	if err != nil {
		return nil, fmt.Errorf("list notifications: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Notification, error) {
		var n Notification
		err := r.Scan(&n.Key, &n.Watch, &n.Channel, &n.EventID, &n.CrawlID, &n.EventType, &n.Course,
			&n.PlayDate, &n.TeeTime, &n.OccurredAt, &n.Status, &n.Reason, &n.Error, &n.Attempts, &n.ClaimedAt, &n.SentAt)
		return n, err
	})
	if err != nil {
		return nil, fmt.Errorf("list notifications: %w", err)
	}
	return out, nil
}
