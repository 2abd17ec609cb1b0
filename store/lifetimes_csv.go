package store

import (
	"encoding/csv"
	"io"
	"reflect"
	"strings"
	"time"
)

// LifetimeCSVHeader is the header row of the lifetimes CSV (`booking-consumer lifetimes --csv` and
// the dashboard's download, which share LifetimeRecord and WriteLifetimesCSV): the csv tags of
// Lifetime, in field order.
var LifetimeCSVHeader = func() (h []string) {
	for _, f := range csvFields {
		h = append(h, f.csv)
	}
	return h
}()

// csvFields are the fields of Lifetime with a csv tag: the CSV's columns.
var csvFields = func() (fs []lifetimeField) {
	for _, f := range lifetimeFields {
		if f.csv != "" {
			fs = append(fs, f)
		}
	}
	return fs
}()

// LifetimeTableColumns are the indexes in LifetimeCSVHeader (and LifetimeRecord) of the columns the
// CLI's table shows: every CSV column but those tagged table:"-".
var LifetimeTableColumns = func() (idx []int) {
	for i, f := range csvFields {
		if f.inTable {
			idx = append(idx, i)
		}
	}
	return idx
}()

// LifetimeRecord is one lifetime as the CSV's cells, timestamps in RFC 3339 in loc, as stored
// (the CLI's table prints them so); WriteLifetimesCSV neutralises the text cells.
func LifetimeRecord(l Lifetime, loc *time.Location) []string { return lifetimeRecord(&l, loc) }

func lifetimeRecord(l *Lifetime, loc *time.Location) []string {
	v := reflect.ValueOf(l).Elem()
	rec := make([]string, len(csvFields))
	for i, f := range csvFields {
		rec[i] = cellValue(v.FieldByIndex(f.index), loc)
	}
	return rec
}

// csvTextColumns are the indexes in LifetimeCSVHeader of the columns holding text (a crawled page
// or a sites file chose it): the string fields (or pointers to one, an optional attribute's), the
// ones neutraliseCSVCell applies to. The others
// are numbers, times and durations this package formats, written as they are: a price is never
// negative (the event codec refuses one), so no number starts with '-', and a quote would make it
// text.
var csvTextColumns = func() (idx []int) {
	t := reflect.TypeFor[Lifetime]()
	for i, f := range csvFields {
		if isText(t.FieldByIndex(f.index).Type) {
			idx = append(idx, i)
		}
	}
	return idx
}()

// isText reports whether a field of type t holds text: a string, or a pointer to one.
func isText(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.String
}

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
	for i := range rows {
		rec := lifetimeRecord(&rows[i], loc)
		for _, i := range csvTextColumns {
			rec[i] = neutraliseCSVCell(rec[i])
		}
		_ = cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}

// NeutraliseCSVCell is neutraliseCSVCell for the other CSVs holding crawled text (the summary's
// course names).
func NeutraliseCSVCell(s string) string { return neutraliseCSVCell(s) }
