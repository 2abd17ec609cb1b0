package store

import (
	"bytes"
	"cmp"
	"context"
	_ "embed"
	"fmt"
	"slices"
	"strings"

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
			res.Inserted, err = insertEvents(ctx, tx, rows)
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
			poison = append(poison, rows.dead[i].withError(err))
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
	seen := make(map[[16]byte]bool, len(batch))
	deadAt := map[position]int{}
	var dead []deadRow
	type valid struct {
		m Message
		d deadRow
	}
	ok := make([]valid, 0, len(batch))
	for _, m := range batch {
		d := deadRow{topic: m.Topic, partition: int32(m.Partition), offset: m.Offset, key: m.Key, value: m.Value, headers: m.Headers}
		switch {
		case m.Err != nil || m.Event == nil:
			d.err = "message has neither an event nor an error"
			if m.Err != nil {
				d.err = cleanText(m.Err.Error())
			}
			p := position{d.topic, d.partition, d.offset}
			if i, ok := deadAt[p]; ok {
				dead[i] = d
				continue
			}
			deadAt[p] = len(dead)
			dead = append(dead, d)
		default:
			rows.valid++
			if seen[m.Event.EventID] {
				continue
			}
			seen[m.Event.EventID] = true
			ok = append(ok, valid{m, d})
		}
	}
	// Sort positions, not the ~200-byte pairs: moving the pairs themselves was most of split's
	// time in the consumer's CPU profile (docs/performance.md).
	order := make([]int32, len(ok))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return bytes.Compare(ok[a].m.Event.EventID[:], ok[b].m.Event.EventID[:]) })
	rows.rows, rows.dead = make([]eventRow, 0, len(ok)), make([]deadRow, 0, len(ok))
	for _, i := range order {
		v := &ok[i]
		if err := rows.add(v.m, v.d); err != nil {
			rows.valid--
			dead = append(dead, v.d.withError(err))
		}
	}
	return rows, dead
}

// eventRows holds a batch's rows, and how to dead-letter each.
type eventRows struct {
	valid int // valid events in the batch, repeats included

	rows []eventRow
	dead []deadRow // how to dead-letter row i
}

func (r *eventRows) len() int { return len(r.rows) }

func (r *eventRows) add(m Message, d deadRow) error {
	payload := m.Value
	if len(payload) == 0 {
		b, err := events.Encode(*m.Event)
		if err != nil {
			return err
		}
		payload = b
	}
	r.rows = append(r.rows, newEventRow(*m.Event, payload, m.Topic, m.Partition, m.Offset))
	r.dead = append(r.dead, d)
	return nil
}

// args are insert_events.sql's named parameters.
func (r *eventRows) args() pgx.NamedArgs { return batchArgs(r.rows) }

// slice returns row i alone.
func (r *eventRows) slice(i int) eventRows {
	return eventRows{valid: 1, rows: r.rows[i : i+1], dead: r.dead[i : i+1]}
}
