package store

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/golfcrawler/golf-crawler/events"
)

// eventRow is one booking_events row as an event fills it (ingested_at takes its default): the
// envelope, converted here, and the event's fields of events.Values and events.Attributes, copied
// whole (their columns are generated: eventfields.go).
type eventRow struct {
	id                                                       [16]byte // binary on the wire, unlike strings
	typ, source, key, course, part, playDate, teeTime, crawl string
	payload                                                  []byte // the value as received, never changed (text, cast to jsonb)
	events.Values
	events.Attributes
	closeReason *string
	occurredAt  time.Time
	topic       string
	partition   int32
	offset      int64
}

// newEventRow is the one place an event becomes a row: e delivered as payload at
// topic/partition/offset. e must be valid (events.Decode's output).
func newEventRow(e events.Event, payload []byte, topic string, partition int, offset int64) eventRow {
	var reason *string
	if e.CloseReason != "" {
		r := string(e.CloseReason)
		reason = &r
	}
	return eventRow{id: e.EventID, typ: string(e.EventType), source: e.Source, key: e.ListingKey,
		course: e.CourseName, part: e.CoursePart, playDate: e.PlayDate, teeTime: e.TeeTime, crawl: e.CrawlID,
		payload: payload, Values: e.Values, Attributes: e.Attributes, closeReason: reason,
		occurredAt: e.OccurredAt, topic: topic, partition: int32(partition), offset: offset}
}

// eventColumn is one column of booking_events that an event fills.
type eventColumn struct {
	name string
	// param is the parameter's PostgreSQL type (an array of it in insert_events.sql); cast, when
	// set, is the column's own type the parameter is cast to (a date or time sent as text, the
	// payload sent as text to keep the bytes as received).
	param, cast string
	info        string               // information_schema.columns.data_type of the column
	value       func(*eventRow) any  // the row's value, for one-row statements
	array       func([]eventRow) any // the column of a batch, for the unnest
	copyValue   func(*eventRow) any  // the value COPY takes (it casts nothing), when not value
	// elem appends the row's value in PostgreSQL's binary format of param, as a length-prefixed
	// field (-1 for NULL): an element of the array parameter, or a field of a binary COPY row.
	// elemOID is param's type OID, which a binary array names.
	elem    func([]byte, *eventRow) []byte
	elemOID uint32
}

// col builds an eventColumn from its getter.
func col[T any](name, param, cast, info string, get func(*eventRow) T) eventColumn {
	oid, elem := binaryElem(name, param, get)
	return eventColumn{
		name: name, param: param, cast: cast, info: info, elem: elem, elemOID: oid,
		value: func(r *eventRow) any { return get(r) },
		array: func(rows []eventRow) any {
			s := make([]T, len(rows))
			for i := range rows {
				s[i] = get(&rows[i])
			}
			return s
		},
	}
}

// eventColumns is THE definition of a booking_events row as an event fills it: the envelope's
// columns below, then fieldColumns, one per field of events.Values and events.Attributes,
// generated from them (eventfields.go, TestEventFieldColumnsAreGenerated). insert_events.sql,
// insert_staged_events.sql and dead_insert_event.sql are expanded from it, the binary COPY stream,
// the batch arrays and the dead-letter retry's values are read through it, storetest.Columns/Row
// (the benchmarks' COPY) come from EventColumns and CopyRow, and TestEventColumnsMatchTheTable
// checks it against information_schema.columns. Every statement names its columns, so their order
// here need not be the table's. Adding an event field: CONTRIBUTING.md (nothing to edit here).
var eventColumns = slices.Concat(envelopeColumns, fieldColumns)

// envelopeColumns are the columns of booking_events that are not a field of events.Values or
// events.Attributes: the event's identity and listing, its type and close reason, when and by which
// crawl, the payload as received and where Kafka delivered it.
var envelopeColumns = []eventColumn{
	col("event_id", "uuid", "", "uuid", func(r *eventRow) [16]byte { return r.id }),
	col("event_type", "text", "", "text", func(r *eventRow) string { return r.typ }),
	col("source", "text", "", "text", func(r *eventRow) string { return r.source }),
	col("listing_key", "text", "", "text", func(r *eventRow) string { return r.key }),
	col("course_name", "text", "", "text", func(r *eventRow) string { return r.course }),
	col("course_part", "text", "", "text", func(r *eventRow) string { return r.part }),
	withCopy(col("play_date", "text", "date", "date", func(r *eventRow) string { return r.playDate }),
		func(r *eventRow) any { d, _ := time.Parse(events.DateLayout, r.playDate); return d }),
	withCopy(col("tee_time", "text", "time", "time without time zone", func(r *eventRow) string { return r.teeTime }),
		func(r *eventRow) any {
			t, _ := time.Parse(events.TimeLayout, r.teeTime)
			return pgtype.Time{Microseconds: int64(t.Hour()*3600+t.Minute()*60) * 1e6, Valid: true}
		}),
	col("close_reason", "text", "", "text", func(r *eventRow) *string { return r.closeReason }),
	col("occurred_at", "timestamptz", "", "timestamp with time zone", func(r *eventRow) time.Time { return r.occurredAt }),
	col("crawl_id", "text", "", "text", func(r *eventRow) string { return r.crawl }),
	col("payload", "text", "jsonb", "jsonb", func(r *eventRow) []byte { return r.payload }),
	col("kafka_topic", "text", "", "text", func(r *eventRow) string { return r.topic }),
	col("kafka_partition", "int", "", "integer", func(r *eventRow) int32 { return r.partition }),
	col("kafka_offset", "bigint", "", "bigint", func(r *eventRow) int64 { return r.offset }),
}

func withCopy(c eventColumn, copyValue func(*eventRow) any) eventColumn {
	c.copyValue = copyValue
	return c
}

// EventColumns are the booking_events columns an event fills, in eventColumns' order.
func EventColumns() []string {
	names := make([]string, len(eventColumns))
	for i, c := range eventColumns {
		names[i] = c.name
	}
	return names
}

// CopyRow renders e, delivered at topic/partition/offset as value, as the values of
// EventColumns in the types COPY takes (which casts nothing): the benchmarks' raw ceiling.
func CopyRow(e events.Event, topic string, partition int, offset int64, value []byte) []any {
	r := newEventRow(e, value, topic, partition, offset)
	out := make([]any, len(eventColumns))
	for i, c := range eventColumns {
		if c.copyValue != nil {
			out[i] = c.copyValue(&r)
		} else {
			out[i] = c.value(&r)
		}
	}
	return out
}

// batchArgs are insert_events.sql's named parameters: one array per column.
func batchArgs(rows []eventRow) pgx.NamedArgs {
	args := make(pgx.NamedArgs, len(eventColumns))
	for _, c := range eventColumns {
		args[c.name] = c.array(rows)
	}
	return args
}

// rowArgs are dead_insert_event.sql's named parameters: one value per column.
func rowArgs(r eventRow) pgx.NamedArgs {
	args := make(pgx.NamedArgs, len(eventColumns))
	for _, c := range eventColumns {
		args[c.name] = c.value(&r)
	}
	return args
}

// expandColumns fills the placeholders of an embedded query from eventColumns:
//
//	{{columns}}  event_id, event_type, ...                      the column list
//	{{arrays}}   @event_id::uuid[], @event_type::text[], ...    the unnest's arrays
//	{{selects}}  u.event_id, ..., u.play_date::date, ...       the unnest's row, cast
//	{{values}}   @event_id::uuid, ..., @play_date::date, ...    one row's values
//	{{param_columns}}  event_id uuid, ..., play_date text, ...  the columns as parameters type them
func expandColumns(query string) string {
	var cols, arrays, selects, values, params []string
	for _, c := range eventColumns {
		cols = append(cols, c.name)
		params = append(params, c.name+" "+c.param)
		arrays = append(arrays, fmt.Sprintf("@%s::%s[]", c.name, c.param))
		sel, val := "u."+c.name, fmt.Sprintf("@%s::%s", c.name, c.param)
		if c.cast != "" {
			sel += "::" + c.cast
			val = fmt.Sprintf("@%s::%s", c.name, c.cast)
		}
		selects = append(selects, sel)
		values = append(values, val)
	}
	return strings.NewReplacer(
		"{{columns}}", strings.Join(cols, ", "),
		"{{arrays}}", strings.Join(arrays, ", "),
		"{{selects}}", strings.Join(selects, ", "),
		"{{values}}", strings.Join(values, ", "),
		"{{param_columns}}", strings.Join(params, ", "),
	).Replace(query)
}

// EventColumnTypes are EventColumns with the data_type information_schema.columns reports for
// each ("play_date date", ...): what TestEventColumnsMatchTheTable compares with the table.
func EventColumnTypes() []string {
	out := make([]string, len(eventColumns))
	for i, c := range eventColumns {
		out[i] = c.name + " " + c.info
	}
	return out
}
