package store

import (
	"encoding/csv"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// LifetimeCSVHeader is the header row of the lifetimes CSV (`booking-consumer lifetimes --csv` and
// the dashboard's download, which share LifetimeRecord and WriteLifetimesCSV).
var LifetimeCSVHeader = []string{"play_date", "tee_time", "source", "course", "part", "status", "opened_at",
	"closed_at", "lifetime", "open_price_krw", "last_price_krw", "changes", "reopens", "listing_key"}

// LifetimeRecord is one lifetime as the CSV's cells, timestamps in RFC 3339 in loc, as stored
// (the CLI's table prints them so); WriteLifetimesCSV neutralises the text cells.
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

// csvTextColumns are the indexes in LifetimeCSVHeader of the columns holding text (a crawled page
// or a sites file chose it), the ones neutraliseCSVCell applies to. The others are numbers, times
// and durations this package formats, written as they are: a price is never negative (the event
// codec refuses one), so no number starts with '-', and a quote would make it text.
var csvTextColumns = func() (idx []int) {
	for _, c := range []string{"play_date", "tee_time", "source", "course", "part", "status", "listing_key"} {
		idx = append(idx, slices.Index(LifetimeCSVHeader, c))
	}
	return idx
}()

// formulaStarts are the first characters that make a spreadsheet read a cell as a formula (OWASP,
// "CSV Injection"): '=', '+', '-', '@', tab and carriage return.
const formulaStarts = "=+-@\t\r"

// neutraliseCSVCell prefixes a cell starting with one of formulaStarts with a single quote, so
// that Excel, LibreOffice and Google Sheets show it as text instead of evaluating it: a course
// named "=HYPERLINK(...)" on a crawled page must not become a link or a command in a download.
func neutraliseCSVCell(s string) string {
	if s != "" && strings.IndexByte(formulaStarts, s[0]) >= 0 {
		return "'" + s
	}
	return s
}

// WriteLifetimesCSV writes the header and one record per row, its text cells neutralised
// (neutraliseCSVCell).
func WriteLifetimesCSV(w io.Writer, rows []Lifetime, loc *time.Location) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(LifetimeCSVHeader)
	for _, l := range rows {
		rec := LifetimeRecord(l, loc)
		for _, i := range csvTextColumns {
			rec[i] = neutraliseCSVCell(rec[i])
		}
		_ = cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}
