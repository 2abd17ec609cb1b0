// Package notifylist prints tee-time alert claims (notify.Notification) for both commands'
// `notifications` subcommands: JSON lines, or a table with terminal-width columns.
package notifylist

import (
	"cmp"
	"encoding/json"
	"io"
	"strconv"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/internal/textfmt"
)

// Write writes rows to w, times in loc to the microsecond (the table spells them as
// events.FormatTimeIn does): JSON lines when asJSON, else a table.
func Write(w io.Writer, rows []notify.Notification, loc *time.Location, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		in := func(t time.Time) time.Time { return t.In(loc).Truncate(time.Microsecond) }
		for _, n := range rows {
			n.ClaimedAt, n.OccurredAt = in(n.ClaimedAt), in(n.OccurredAt)
			if n.SentAt != nil {
				at := in(*n.SentAt)
				n.SentAt = &at
			}
			if err := enc.Encode(n); err != nil {
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

// won is a price thousands-separated, or "-" without one.
func won(p *int64) string {
	if p == nil {
		return "-"
	}
	return textfmt.Thousands(*p)
}
