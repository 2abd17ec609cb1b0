// Package notifylist prints tee-time alert claims (notify.Notification) for both commands'
// `notifications` subcommands: JSON lines, or a table with terminal-width columns.
package notifylist

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/internal/textfmt"
)

// ListFlags are the flags of both commands' `notifications` (the listing): --status, --watch,
// --tz, --json, --limit.
type ListFlags struct {
	status, watch, tz string
	asJSON            bool
	limit             int
}

// Define defines the flags on fs, times in tz by default.
func (l *ListFlags) Define(fs *flag.FlagSet, tz string) {
	fs.StringVar(&l.status, "status", "", "only this `status`: sending, pending (waiting for a crawl to confirm it), sent, failed, unknown, skipped or withheld (its listing closed before it was confirmed)")
	fs.StringVar(&l.watch, "watch", "", "only this `watch`")
	fs.StringVar(&l.tz, "tz", tz, "time `zone` of the printed timestamps")
	fs.BoolVar(&l.asJSON, "json", false, "JSON lines instead of a table")
	fs.IntVar(&l.limit, "limit", 1000, "at most this many `rows`")
}

// Check refuses flags that select nothing (a usage error), before any store is opened.
func (l *ListFlags) Check() error {
	if l.status != "" && !slices.Contains(notify.Statuses, l.status) {
		return fmt.Errorf("%w: notifications: --status %q: want one of %s", cli.ErrUsage, l.status, strings.Join(notify.Statuses, ", "))
	}
	if l.limit < 1 {
		return fmt.Errorf("%w: notifications: --limit must be at least 1", cli.ErrUsage)
	}
	_, err := cli.Location(l.tz)
	return err
}

// List lists st's claims the flags select (Check first) and writes them to w (Write).
func (l *ListFlags) List(ctx context.Context, w io.Writer, st notify.ClaimStore) error {
	loc, err := cli.Location(l.tz)
	if err != nil {
		return err
	}
	rows, err := st.List(ctx, notify.Filter{Status: notify.Status(l.status), Watch: l.watch, Limit: l.limit})
	if err != nil {
		return fmt.Errorf("list alerts: %w", err)
	}
	return Write(w, rows, loc, l.asJSON)
}

// Write writes rows to w, times in loc spelled by events.FormatTimeIn: JSON lines when asJSON,
// else a table.
func Write(w io.Writer, rows []notify.Notification, loc *time.Location, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		for _, n := range rows {
			if err := enc.Encode(toJSON(n, loc)); err != nil {
				return err
			}
		}
		return nil
	}
	t := &cli.Table{}
	t.Add("claimed_at", "status", "watch", "channel", "event", "course", "part", "play_date", "tee_time", "price", "old_price", "attempts", "reason/error")
	for _, n := range rows {
		why := n.Reason
		if n.Error != "" {
			why = n.Error
		}
		t.Add(events.FormatTimeIn(n.ClaimedAt, loc), string(n.Status), n.Watch, n.Channel, n.EventType, n.Course, cmp.Or(n.CoursePart, "-"),
			n.PlayDate, n.TeeTime, won(n.PriceKRW), won(n.PreviousPriceKRW), strconv.Itoa(n.Attempts), why)
	}
	return t.Write(w)
}

// notificationJSON is a notify.Notification as --json writes it: the same keys in the same
// order, the times spelled by events.FormatTimeIn (encoding/json's time.Time drops a fraction's
// trailing zeros, so one time read two ways).
type notificationJSON struct {
	Key              uuid.UUID `json:"key"`
	Watch            string    `json:"watch"`
	Channel          string    `json:"channel"`
	EventID          uuid.UUID `json:"event_id"`
	CrawlID          string    `json:"crawl_id"`
	EventType        string    `json:"event_type"`
	Course           string    `json:"course_name"`
	CoursePart       string    `json:"course_part,omitempty"`
	PriceKRW         *int64    `json:"price_krw,omitempty"`
	PreviousPriceKRW *int64    `json:"previous_price_krw,omitempty"`
	PlayDate         string    `json:"play_date"`
	TeeTime          string    `json:"tee_time"`
	OccurredAt       string    `json:"occurred_at"`
	Status           string    `json:"status"`
	Reason           string    `json:"reason,omitempty"`
	Error            string    `json:"error,omitempty"`
	Attempts         int       `json:"attempts"`
	ClaimedAt        string    `json:"claimed_at"`
	SentAt           string    `json:"sent_at,omitempty"`
}

func toJSON(n notify.Notification, loc *time.Location) notificationJSON {
	j := notificationJSON{Key: n.Key, Watch: n.Watch, Channel: n.Channel, EventID: n.EventID, CrawlID: n.CrawlID,
		EventType: n.EventType, Course: n.Course, CoursePart: n.CoursePart, PriceKRW: n.PriceKRW,
		PreviousPriceKRW: n.PreviousPriceKRW, PlayDate: n.PlayDate, TeeTime: n.TeeTime,
		OccurredAt: events.FormatTimeIn(n.OccurredAt, loc), Status: n.Status, Reason: n.Reason, Error: n.Error,
		Attempts: n.Attempts, ClaimedAt: events.FormatTimeIn(n.ClaimedAt, loc)}
	if n.SentAt != nil {
		j.SentAt = events.FormatTimeIn(*n.SentAt, loc)
	}
	return j
}

// won is a price thousands-separated, or "-" without one.
func won(p *int64) string {
	if p == nil {
		return "-"
	}
	return textfmt.Thousands(*p)
}
