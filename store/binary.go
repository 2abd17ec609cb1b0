package store

import (
	"encoding/binary"
	"fmt"
	"time"
)

// PostgreSQL's binary formats of the parameter types eventColumns uses, written by hand: pgx's
// generic array encoding boxed every element into an interface and grew each array's buffer by
// appending, the largest share of the consumer's allocations (docs/performance.md). The formats
// are PostgreSQL's *send/*recv functions': uuid 16 bytes, text its bytes, bigint and int
// big-endian, timestamptz microseconds since 2000-01-01 UTC (what pgx sends for a time.Time).

// The type OIDs a binary array header names (pg_type.oid), by eventColumn.param.
var paramOIDs = map[string]uint32{"uuid": 2950, "text": 25, "bigint": 20, "int": 23, "timestamptz": 1184}

// postgresEpochMicros is 2000-01-01 00:00:00 UTC in Unix microseconds.
const postgresEpochMicros = 946_684_800_000_000

// binaryElem is the OID and the field encoder of a column of type param read by get; it panics
// (at package initialisation: eventColumns is a package variable) when the Go type does not
// match param or has no encoder here, so a new column's line cannot be half right.
func binaryElem[T any](name, param string, get func(*eventRow) T) (uint32, func([]byte, *eventRow) []byte) {
	var f func([]byte, *eventRow) []byte
	var want string
	switch g := any(get).(type) {
	case func(*eventRow) [16]byte:
		want, f = "uuid", func(b []byte, r *eventRow) []byte { id := g(r); return appendField(b, id[:]) }
	case func(*eventRow) string:
		want, f = "text", func(b []byte, r *eventRow) []byte { return appendText(b, g(r)) }
	case func(*eventRow) []byte:
		want, f = "text", func(b []byte, r *eventRow) []byte { return appendField(b, g(r)) }
	case func(*eventRow) *string:
		want, f = "text", func(b []byte, r *eventRow) []byte {
			if v := g(r); v != nil {
				return appendText(b, *v)
			}
			return appendNull(b)
		}
	case func(*eventRow) int64:
		want, f = "bigint", func(b []byte, r *eventRow) []byte { return appendInt64(b, g(r)) }
	case func(*eventRow) *int64:
		want, f = "bigint", func(b []byte, r *eventRow) []byte {
			if v := g(r); v != nil {
				return appendInt64(b, *v)
			}
			return appendNull(b)
		}
	case func(*eventRow) int: // an event's int is sent whole and cast to its column (eventfields.go)
		want, f = "bigint", func(b []byte, r *eventRow) []byte { return appendInt64(b, int64(g(r))) }
	case func(*eventRow) *int:
		want, f = "bigint", func(b []byte, r *eventRow) []byte {
			if v := g(r); v != nil {
				return appendInt64(b, int64(*v))
			}
			return appendNull(b)
		}
	case func(*eventRow) int32:
		want, f = "int", func(b []byte, r *eventRow) []byte { return appendInt32(b, g(r)) }
	case func(*eventRow) time.Time:
		want, f = "timestamptz", func(b []byte, r *eventRow) []byte {
			return appendInt64(b, g(r).UnixMicro()-postgresEpochMicros)
		}
	}
	if f == nil || want != param {
		panic(fmt.Sprintf("store: column %s: no binary encoding of %T as %s", name, get, param))
	}
	return paramOIDs[param], f
}

func appendNull(b []byte) []byte { return binary.BigEndian.AppendUint32(b, 0xFFFFFFFF) } // length -1

func appendField(b, v []byte) []byte {
	return append(binary.BigEndian.AppendUint32(b, uint32(len(v))), v...)
}

func appendText(b []byte, v string) []byte {
	return append(binary.BigEndian.AppendUint32(b, uint32(len(v))), v...)
}

func appendInt64(b []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint32(b, 8), uint64(v))
}

func appendInt32(b []byte, v int32) []byte {
	return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(b, 4), uint32(v))
}

// appendArray appends column c of rows as a one-dimensional binary array (array_recv's format:
// dimensions, a has-nulls flag, the element type, the length and lower bound, the elements).
func appendArray(b []byte, c *eventColumn, rows []eventRow) []byte {
	b = binary.BigEndian.AppendUint32(b, 1) // dimensions
	b = binary.BigEndian.AppendUint32(b, 1) // may hold nulls (array_recv works them out itself)
	b = binary.BigEndian.AppendUint32(b, c.elemOID)
	b = binary.BigEndian.AppendUint32(b, uint32(len(rows)))
	b = binary.BigEndian.AppendUint32(b, 1) // lower bound
	for i := range rows {
		b = c.elem(b, &rows[i])
	}
	return b
}

// copyHeader starts a binary COPY stream: the signature, no flags, no header extension.
var copyHeader = []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")

// appendCopyRows appends rows as binary COPY tuples of eventColumns, and the stream's trailer.
func appendCopyRows(b []byte, rows []eventRow) []byte {
	for i := range rows {
		b = binary.BigEndian.AppendUint16(b, uint16(len(eventColumns)))
		for c := range eventColumns {
			b = eventColumns[c].elem(b, &rows[i])
		}
	}
	return binary.BigEndian.AppendUint16(b, 0xFFFF)
}
