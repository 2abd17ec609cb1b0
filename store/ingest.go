package store

import (
	"bytes"
	"cmp"
	"context"
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/golfcrawler/golf-crawler/events"
)

var (
	//go:embed queries/insert_events.sql
	insertEventsTemplate string
	// insertEventsSQL is insert_events.sql with its column placeholders filled (eventrow.go).
	insertEventsSQL = expandColumns(insertEventsTemplate)
	//go:embed queries/dead_letter.sql
	deadLetterSQL string
	//go:embed queries/stage_events.sql
	stageEventsTemplate string
	stageEventsSQL      = expandColumns(stageEventsTemplate)
	//go:embed queries/insert_staged_events.sql
	insertStagedTemplate string
	insertStagedSQL      = expandColumns(insertStagedTemplate)
	// copyStagedSQL fills the staging table from a binary COPY stream of eventColumns.
	copyStagedSQL = "copy booking_events_staged (" + strings.Join(EventColumns(), ", ") + ") from stdin (format binary)"
)

// Message is one Kafka message as the consumer hands it to Ingest: its position, its raw bytes,
// and either the decoded Event (valid: insert it) or Err (dead-letter it with Err.Error()).
type Message struct {
	Topic     string
	Partition int
	Offset    int64
	Key       []byte
	Value     []byte
	Headers   []events.Header // the Kafka headers, kept with a dead letter
	Event     *events.Event
	Err       error
}

// Result counts what one Ingest did. Inserted + Duplicates + DeadLettered == len(batch), except
// that a Kafka position repeated in one batch is dead-lettered once.
type Result struct {
	Inserted     int // new events stored
	Duplicates   int // valid events already stored (or repeated in the batch): a no-op
	DeadLettered int // messages recorded in booking_events_dead, including rows PostgreSQL rejected
}

// Ingest stores one batch in ONE transaction: a single set-based INSERT ... ON CONFLICT
// (event_id) DO NOTHING for the valid events, and an upsert into booking_events_dead for the
// invalid ones. When it returns nil the whole batch is durable and the consumer may commit the
// offsets; on error nothing was written and the batch may be retried as is (IsTransient says
// whether that is worth it).
//
// One poison row never blocks a batch: if PostgreSQL rejects the set-based insert with a data
// exception or integrity violation (which validation should make rare), Ingest redoes the batch
// row by row inside savepoints and dead-letters only the rows that fail.
func (s *Store) Ingest(ctx context.Context, batch []Message) (Result, error) {
	rows, dead := split(batch)
	res, err := s.ingest(ctx, rows, dead, false)
	if Decide(ctx, err).Fate == FateDeadLetter {
		res, err = s.ingest(ctx, rows, dead, true)
	}
	if err != nil {
		return Result{}, fmt.Errorf("ingest batch of %d: %w", len(batch), err)
	}
	return res, nil
}

func (s *Store) ingest(ctx context.Context, rows eventRows, dead []deadRow, rowByRow bool) (Result, error) {
	var res Result
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var poison []deadRow
		var err error
		if rowByRow {
			res.Inserted, poison, err = insertOneByOne(ctx, tx, rows)
		} else {
			res.Inserted, err = writeBatch(ctx, tx, rows)
		}
		if err != nil {
			return err
		}
		all := append(dead, poison...)
		if err := deadLetter(ctx, tx, all); err != nil {
			return err
		}
		res.DeadLettered = len(all)
		res.Duplicates = rows.valid - res.Inserted - len(poison)
		return nil
	})
	return res, interpret(err)
}

// insertEvents inserts rows and returns how many were new. booking_events' trigger keeps the
// listing_lifetimes projection in the same statement (store/queries/projection_triggers.sql).
func insertEvents(ctx context.Context, tx pgx.Tx, rows eventRows) (int, error) {
	if rows.len() == 0 {
		return 0, nil
	}
	tag, err := tx.Exec(ctx, insertEventsSQL, rows.args())
	if err != nil {
		return 0, fmt.Errorf("insert %d events: %w", rows.len(), projectionErr(err))
	}
	return int(tag.RowsAffected()), nil
}

// writeBatch is how a whole batch is written (the row-by-row retry uses insertEvents): copyEvents.
// insertEventsBinary, the same unnest as insertEvents with the arrays encoded by hand, is the
// alternative docs/performance.md measured against it.
var writeBatch = copyEvents

// copyEvents writes rows as a binary COPY into the session's staging table, then inserts them into
// booking_events with insert_staged_events.sql, and returns how many were new. The COPY stream is
// encoded by hand into one reused buffer, and pgx sends it in 64 KiB chunks, so a batch costs no
// per-value allocation (pgx's array parameters boxed every value, and a 1000-row statement's Bind
// message grew, by doubling, to ~600 KB). Its rows are the unnest's: the same columns, types and
// casts, in the same (event_id) order.
func copyEvents(ctx context.Context, tx pgx.Tx, rows eventRows) (int, error) {
	if rows.len() == 0 {
		return 0, nil
	}
	if _, err := tx.Exec(ctx, stageEventsSQL); err != nil {
		return 0, fmt.Errorf("staging table: %w", err)
	}
	buf := encodeBuffers.Get().(*[]byte)
	defer encodeBuffers.Put(buf)
	*buf = appendCopyRows(append(slices.Grow((*buf)[:0], rows.encodedSize()), copyHeader...), rows.rows)
	if _, err := tx.Conn().PgConn().CopyFrom(ctx, bytes.NewReader(*buf), copyStagedSQL); err != nil {
		return 0, fmt.Errorf("copy %d events: %w", rows.len(), err)
	}
	tag, err := tx.Exec(ctx, insertStagedSQL)
	if err != nil {
		return 0, fmt.Errorf("insert %d events: %w", rows.len(), projectionErr(err))
	}
	return int(tag.RowsAffected()), nil
}

// encodeBuffers holds the batches' encoding buffers (Config.Inflight of them are in use at once).
var encodeBuffers = sync.Pool{New: func() any { return new([]byte) }}

// insertEventsBinary is insertEvents with its array parameters encoded by hand (binary arrays in one
// reused buffer) and sent with the positional form of insert_events.sql.
func insertEventsBinary(ctx context.Context, tx pgx.Tx, rows eventRows) (int, error) {
	if rows.len() == 0 {
		return 0, nil
	}
	buf := encodeBuffers.Get().(*[]byte)
	defer encodeBuffers.Put(buf)
	b := slices.Grow((*buf)[:0], rows.encodedSize())
	ends := make([]int, len(eventColumns))
	for i := range eventColumns {
		b = appendArray(b, &eventColumns[i], rows.rows)
		ends[i] = len(b)
	}
	*buf = b
	params, formats := make([][]byte, len(eventColumns)), make([]int16, len(eventColumns))
	start := 0
	for i, end := range ends {
		params[i], formats[i], start = b[start:end], 1, end
	}
	tag, err := tx.Conn().PgConn().ExecParams(ctx, insertEventsPositional, params, nil, formats, nil).Close()
	if err != nil {
		return 0, fmt.Errorf("insert %d events: %w", rows.len(), projectionErr(err))
	}
	return int(tag.RowsAffected()), nil
}

// insertEventsPositional is insertEventsSQL with $1, $2, ... for its named parameters.
var insertEventsPositional = func() string {
	q := insertEventsSQL
	for i, c := range eventColumns {
		q = strings.ReplaceAll(q, "@"+c.name+"::", fmt.Sprintf("$%d::", i+1))
	}
	return q
}()

// insertOneByOne inserts each row in its own savepoint and returns the rows PostgreSQL rejected
// as dead letters; any other error aborts.
func insertOneByOne(ctx context.Context, tx pgx.Tx, rows eventRows) (int, []deadRow, error) {
	inserted := 0
	var poison []deadRow
	for i := range rows.len() {
		one := rows.slice(i)
		err := pgx.BeginFunc(ctx, tx, func(sp pgx.Tx) error {
			n, err := insertEvents(ctx, sp, one)
			inserted += n
			return err
		})
		switch Decide(ctx, err).Fate {
		case FateDone:
		case FateDeadLetter:
			poison = append(poison, newDeadRow(rows.msgs[i]).withError(err))
		default: // not this row's fault: the whole batch fails, and Decide says what the loop does
			return 0, nil, fmt.Errorf("event %s: %w", uuid.UUID(rows.rows[i].id), err)
		}
	}
	return inserted, poison, nil
}

// deadLetter upserts dead letters in (topic, partition, offset) order, one per position (the last
// one given wins). Two batches in concurrent transactions holding the same positions then lock
// them in the same order and wait for each other instead of deadlocking (40P01), as inserted
// events do in event_id order.
func deadLetter(ctx context.Context, tx pgx.Tx, dead []deadRow) error {
	if len(dead) == 0 {
		return nil
	}
	dead = slices.Clone(dead)
	slices.SortStableFunc(dead, func(a, b deadRow) int { return a.position().compare(b.position()) })
	uniq := dead[:0]
	for i, d := range dead {
		if i+1 < len(dead) && dead[i+1].position() == d.position() {
			continue // a later row for the same position replaces this one
		}
		uniq = append(uniq, d)
	}
	dead = uniq
	n := len(dead)
	topic, part, off := make([]string, n), make([]int32, n), make([]int64, n)
	key, value, msg, headers := make([][]byte, n), make([][]byte, n), make([]string, n), make([]string, n)
	for i, d := range dead {
		topic[i], part[i], off[i], key[i], value[i], msg[i] = d.topic, d.partition, d.offset, d.key, d.value, d.err
		headers[i] = string(encodeHeaders(d.headers))
	}
	if _, err := tx.Exec(ctx, deadLetterSQL, topic, part, off, key, value, msg, headers); err != nil {
		return fmt.Errorf("dead-letter %d messages: %w", n, interpret(err))
	}
	return nil
}

// deadRow is one booking_events_dead row.
type deadRow struct {
	topic      string
	partition  int32
	offset     int64
	key, value []byte
	headers    []events.Header
	err        string
}

func (d deadRow) withError(err error) deadRow {
	d.err = cleanText(err.Error())
	return d
}

// cleanText makes s storable as PostgreSQL text (valid UTF-8 without NUL), so that recording a
// poison message cannot itself be rejected.
func cleanText(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\\0")
}

type position struct {
	topic     string
	partition int32
	offset    int64
}

func (p position) compare(q position) int {
	if c := strings.Compare(p.topic, q.topic); c != 0 {
		return c
	}
	if c := cmp.Compare(p.partition, q.partition); c != 0 {
		return c
	}
	return cmp.Compare(p.offset, q.offset)
}

func (d deadRow) position() position { return position{d.topic, d.partition, d.offset} }

// split turns a batch into column arrays of distinct valid events (the first delivery of an
// event_id in the batch wins: its Kafka position is the one stored) and the dead letters, one per
// position.
//
// The rows are in event_id order. Two batches in concurrent transactions (the consumer inserts
// up to consumer.Config.Inflight at once) that share an event_id then take its unique-index lock
// in the same order, so they wait for each other instead of deadlocking.
func split(batch []Message) (eventRows, []deadRow) {
	var rows eventRows
	seen := make(map[[16]byte]struct{}, len(batch))
	deadAt := map[position]int{}
	var dead []deadRow
	ok := make([]int32, 0, len(batch)) // the valid messages, as positions in batch
	for i := range batch {
		m := &batch[i]
		switch {
		case m.Err != nil || m.Event == nil:
			d := newDeadRow(m)
			d.err = "message has neither an event nor an error"
			if m.Err != nil {
				d.err = cleanText(m.Err.Error())
			}
			p := d.position()
			if i, ok := deadAt[p]; ok {
				dead[i] = d
				continue
			}
			deadAt[p] = len(dead)
			dead = append(dead, d)
		default:
			rows.valid++
			if _, dup := seen[m.Event.EventID]; dup {
				continue
			}
			seen[m.Event.EventID] = struct{}{}
			ok = append(ok, int32(i))
		}
	}
	// Sort positions, not the messages: moving ~200-byte values was most of split's time in the
	// consumer's CPU profile (docs/performance.md).
	slices.SortFunc(ok, func(a, b int32) int { return bytes.Compare(batch[a].Event.EventID[:], batch[b].Event.EventID[:]) })
	rows.rows, rows.msgs = make([]eventRow, 0, len(ok)), make([]*Message, 0, len(ok))
	for _, i := range ok {
		if err := rows.add(&batch[i]); err != nil {
			rows.valid--
			dead = append(dead, newDeadRow(&batch[i]).withError(err))
		}
	}
	return rows, dead
}

// newDeadRow is m's dead letter, without its error.
func newDeadRow(m *Message) deadRow {
	return deadRow{topic: m.Topic, partition: int32(m.Partition), offset: m.Offset, key: m.Key, value: m.Value, headers: m.Headers}
}

// eventRows holds a batch's rows, and the message of each (to dead-letter it).
type eventRows struct {
	valid int // valid events in the batch, repeats included

	rows []eventRow
	msgs []*Message // the message of row i
}

func (r *eventRows) len() int { return len(r.rows) }

func (r *eventRows) add(m *Message) error {
	payload := m.Value
	if len(payload) == 0 {
		b, err := events.Encode(*m.Event)
		if err != nil {
			return err
		}
		payload = b
	}
	r.rows = append(r.rows, newEventRow(*m.Event, payload, m.Topic, m.Partition, m.Offset))
	r.msgs = append(r.msgs, m)
	return nil
}

// encodedSize is about (a little over) the bytes of rows in binary COPY or as binary arrays: each
// value's length word, 8 bytes for a number or a timestamp, 16 for an id, and the text, which the
// payload holds all of, plus the payload itself. Growing the buffer to it at once saves the copies
// of growing it by appending.
func (r *eventRows) encodedSize() int {
	n := len(copyHeader) + 2
	for i := range r.rows {
		n += 2 + 4*len(eventColumns) + 8*6 + 16 + 2*len(r.rows[i].payload) + len(r.rows[i].topic)
	}
	return n
}

// args are insert_events.sql's named parameters.
func (r *eventRows) args() pgx.NamedArgs { return batchArgs(r.rows) }

// slice returns row i alone.
func (r *eventRows) slice(i int) eventRows {
	return eventRows{valid: 1, rows: r.rows[i : i+1], msgs: r.msgs[i : i+1]}
}
