package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/jackc/pgx/v5/pgtype"
)

// The fields of Lifetime are the one list of booking_lifetimes' columns on the read side. Each
// field carries three names:
//   - db: the view's column, matched by name when a row is scanned (pgx.RowToStructByName); the
//     queries select * from booking_lifetimes, so a new view column needs only a new field, and
//     TestLifetimeFieldsMatchTheView fails until every column has a field and every field a column;
//   - json: its key in `booking-consumer lifetimes --json` (LifetimesJSON), in field order;
//   - csv: its column in the CSV (LifetimeCSVHeader, LifetimeRecord), in field order; a field
//     without a csv tag is not in the CSV (nor in the CLI's table, which prints the CSV's cells);
//   - table:"-" leaves a CSV column out of the CLI's table (LifetimeTableColumns): the listing key,
//     long and a repeat of the columns before it.
//
// So a new field may go anywhere in Lifetime: the JSON, the CSV and the table follow its place.
// An embedded struct (events.Attributes) is its fields in its place, each named by its json tag in
// all three (db, json, csv) and shown in the table: the event's name is the column's.
//
// How a value is written follows its Go type, the same in both formats: a time.Time in the
// caller's zone (RFC 3339), a nil pointer as null in JSON and an empty cell in the CSV, a string
// as it is (neutralised in the CSV: neutraliseCSVCell). lifetime is a PostgreSQL interval scanned
// into a time.Duration (pgx counts a day as 24 h, as the interval of two timestamptz does, so it
// is exact to the microsecond); JSON carries it as seconds (a float, its key ending in _seconds),
// the CSV as a Go duration rounded to the second (1h30m0s).

// Date is a calendar date written YYYY-MM-DD, scanned from a PostgreSQL date.
type Date string

// ScanDate implements pgtype.DateScanner.
func (d *Date) ScanDate(v pgtype.Date) error {
	if !v.Valid || v.InfinityModifier != pgtype.Finite {
		return errors.New("scan date: want a finite date")
	}
	*d = Date(v.Time.Format(time.DateOnly))
	return nil
}

// TimeOfDay is a time of day written HH:MM (seconds dropped), scanned from a PostgreSQL time.
type TimeOfDay string

// ScanTime implements pgtype.TimeScanner.
func (c *TimeOfDay) ScanTime(v pgtype.Time) error {
	if !v.Valid {
		return errors.New("scan time of day: want a time, not NULL")
	}
	m := v.Microseconds / int64(time.Minute/time.Microsecond)
	*c = TimeOfDay(fmt.Sprintf("%02d:%02d", m/60, m%60))
	return nil
}

// lifetimeField is one field of Lifetime: its index (a path, for an embedded struct's field) and
// its names (the package comment above).
type lifetimeField struct {
	index         []int
	db, json, csv string
	inTable       bool // csv != "" and no table:"-" tag
}

// lifetimeFields are Lifetime's fields in order, read once from its tags.
var lifetimeFields = fieldsOf(reflect.TypeFor[Lifetime]())

// fieldsOf are the lifetimeFields of struct type t: a field by its tags, an embedded struct's
// fields by their json names.
func fieldsOf(t reflect.Type) (fs []lifetimeField) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.Anonymous {
			fs = append(fs, lifetimeField{index: []int{i}, db: f.Tag.Get("db"), json: f.Tag.Get("json"), csv: f.Tag.Get("csv"),
				inTable: f.Tag.Get("csv") != "" && f.Tag.Get("table") != "-"})
			continue
		}
		for j := range f.Type.NumField() {
			name, _, _ := strings.Cut(f.Type.Field(j).Tag.Get("json"), ",")
			fs = append(fs, lifetimeField{index: []int{i, j}, db: name, json: name, csv: name, inTable: true})
		}
	}
	return fs
}

// LifetimeColumns are the booking_lifetimes columns Lifetime reads (its db tags), in field order.
func LifetimeColumns() []string {
	cols := make([]string, len(lifetimeFields))
	for i, f := range lifetimeFields {
		cols[i] = f.db
	}
	return cols
}

var (
	timeType     = reflect.TypeFor[time.Time]()
	durationType = reflect.TypeFor[time.Duration]()
)

// jsonValue is v as --json writes it: a time in loc, a duration in seconds, a nil pointer null.
func jsonValue(v reflect.Value, loc *time.Location) any {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	switch v.Type() {
	case timeType:
		return events.FormatTimeIn(v.Interface().(time.Time), loc)
	case durationType:
		return time.Duration(v.Int()).Seconds()
	}
	return v.Interface()
}

// cellValue is v (addressable) as the CSV writes it: a time in loc (RFC 3339), a duration
// rounded to the second, a nil pointer empty. The common types go through a type switch on v's
// address, which allocates nothing; reflection is for the rest.
func cellValue(v reflect.Value, loc *time.Location) string {
	switch p := v.Addr().Interface().(type) {
	case *time.Time:
		return events.FormatTimeIn(*p, loc)
	case *time.Duration:
		return p.Round(time.Second).String()
	case *string:
		return *p
	case *int:
		return strconv.Itoa(*p)
	}
	switch {
	case v.Kind() == reflect.Pointer && v.IsNil():
		return ""
	case v.Kind() == reflect.Pointer:
		return cellValue(v.Elem(), loc)
	case v.Kind() == reflect.String:
		return v.String()
	case v.CanInt():
		return strconv.FormatInt(v.Int(), 10)
	}
	return fmt.Sprint(v.Interface())
}

// LifetimesJSON is rows as `booking-consumer lifetimes --json` writes them: one object per row,
// its keys the json tags in field order, times in loc (an empty slice, not nil, for no rows).
func LifetimesJSON(rows []Lifetime, loc *time.Location) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, len(rows))
	for i := range rows {
		v := reflect.ValueOf(rows[i])
		b := []byte{'{'}
		for j, f := range lifetimeFields {
			val, err := json.Marshal(jsonValue(v.FieldByIndex(f.index), loc))
			if err != nil {
				return nil, fmt.Errorf("lifetime %s: %w", f.json, err)
			}
			if j > 0 {
				b = append(b, ',')
			}
			b = append(strconv.AppendQuote(b, f.json), ':')
			b = append(b, val...)
		}
		out[i] = append(b, '}')
	}
	return out, nil
}
