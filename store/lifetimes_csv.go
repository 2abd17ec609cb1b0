package store

import (
	"encoding/csv"
	"io"
	"strconv"
	"time"
)

// LifetimeCSVHeader is the header row of the lifetimes CSV (`booking-consumer lifetimes --csv` and
// the dashboard's download, which share LifetimeRecord and WriteLifetimesCSV).
var LifetimeCSVHeader = []string{"play_date", "tee_time", "source", "course", "part", "status", "opened_at",
	"closed_at", "lifetime", "open_price_krw", "last_price_krw", "changes", "reopens", "listing_key"}

// LifetimeRecord is one lifetime as the CSV's text cells, timestamps in RFC 3339 in loc.
func LifetimeRecord(l Lifetime, loc *time.Location) []string {
	closed := ""
	if l.ClosedAt != nil {
		closed = l.ClosedAt.In(loc).Format(time.RFC3339)
	}
	return []string{l.PlayDate, l.TeeTime, l.Source, l.CourseName, l.CoursePart, l.Status,
		l.OpenedAt.In(loc).Format(time.RFC3339), closed, l.Lifetime.Round(time.Second).String(),
		optInt(l.OpenPriceKRW), optInt(l.LastPriceKRW), strconv.Itoa(l.ChangeCount), strconv.Itoa(l.ReopenCount), l.ListingKey}
}

func optInt(p *int64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatInt(*p, 10)
}

// WriteLifetimesCSV writes the header and one record per row.
func WriteLifetimesCSV(w io.Writer, rows []Lifetime, loc *time.Location) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(LifetimeCSVHeader)
	for _, l := range rows {
		_ = cw.Write(LifetimeRecord(l, loc))
	}
	cw.Flush()
	return cw.Error()
}
