package store_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// TestEventColumnsMatchTheTable holds the one definition of the row (eventrow.go, and the columns
// eventfields.go generates from events.Values and events.Attributes) to the migrated table: every
// column but ingested_at (which takes its default), once, of its type. Every statement names its
// columns, so the order is not compared: a field's column is the table's last (add column), wherever
// its field is declared.
func TestEventColumnsMatchTheTable(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	rows, err := db.Query(t.Context(), `select column_name || ' ' || data_type from information_schema.columns
		where table_schema = current_schema() and table_name = 'booking_events' and column_name <> 'ingested_at'
		order by ordinal_position`)
	if err != nil {
		t.Fatal(err)
	}
	table, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	got := store.EventColumnTypes()
	inTable := map[string]bool{}
	for _, c := range table {
		inTable[c] = true
	}
	named := map[string]bool{}
	for _, c := range got {
		name, _, _ := strings.Cut(c, " ")
		if named[name] {
			t.Errorf("eventColumns names %s twice", name)
		}
		named[name] = true
		if !inTable[c] {
			t.Errorf("eventColumns has %q, booking_events has not: a new field of events.Values or events.Attributes needs "+
				"its column (a migration, of this type), a type that differs its migration or its Go type changed", c)
		}
		delete(inTable, c)
	}
	for _, c := range table {
		if inTable[c] {
			t.Errorf("booking_events has %q, eventColumns has not: no event fills it (its field is not in events.Values "+
				"or events.Attributes, or eventfields.go is stale: UPDATE_GOLDENS=1 go test ./store -run TestEventFieldColumnsAreGenerated)", c)
		}
	}
	if t.Failed() {
		t.Logf("eventColumns:\n  %s\nbooking_events:\n  %s", strings.Join(got, "\n  "), strings.Join(table, "\n  "))
	}
}

// TestEventColumnsHoldThePayload: every booking_events column named after a field of the event
// holds what the stored payload says, over random histories that vary every nullable field; so
// a column no event fills (always null, which the view and the fold would agree on: a field left out
// of eventColumns, a conversion that loses it) fails here.
func TestEventColumnsHoldThePayload(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	s := store.New(db)
	rng := rand.New(rand.NewPCG(40, 1))
	var msgs []store.Message
	for i := range 40 {
		for _, e := range randomHistory(rng, i) {
			msgs = append(msgs, message(t, e, len(msgs)))
		}
	}
	if _, err := s.Ingest(t.Context(), msgs); err != nil {
		t.Fatal(err)
	}
	fields := map[string]bool{}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[events.Event]()) {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" {
			fields[name] = true
		}
	}
	rows, err := db.Query(t.Context(), `select column_name from information_schema.columns
		where table_schema = current_schema() and table_name = 'booking_events'
		  and data_type in ('integer', 'bigint', 'text', 'uuid', 'date') order by ordinal_position`)
	if err != nil {
		t.Fatal(err)
	}
	columns, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, c := range columns {
		if !fields[c] {
			continue
		}
		checked++
		var differ, set int
		q := fmt.Sprintf(`select count(*) filter (where (payload->>'%[1]s') is distinct from %[1]s::text),
			count(%[1]s) from booking_events`, c)
		if err := db.QueryRow(t.Context(), q).Scan(&differ, &set); err != nil {
			t.Fatal(err)
		}
		if differ > 0 {
			t.Errorf("booking_events.%s differs from the payload's %s in %d of %d rows (is it in eventColumns? a field of events.Values or events.Attributes is, by eventfields.go)", c, c, differ, len(msgs))
		}
		if set == 0 {
			t.Errorf("booking_events.%s is null in every row: the histories never set it", c)
		}
	}
	if checked < 8 {
		t.Errorf("only %d columns compared with the payload", checked)
	}
}

// An event's int goes to PostgreSQL whole (a bigint parameter cast to the integer column), so one
// beyond the column is PostgreSQL's error and a dead letter, never a number cut to 32 bits that a
// check could pass (1<<32 + 4 was 4 players when the row converted it to an int32). Validate bounds
// every field first; this is the row's own guarantee, for a field whose range outgrows its column.
func TestEventIntBeyondItsColumnIsADeadLetter(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	s := store.New(db)
	l := listing(1)
	e := events.Opened(l, "crawl-int", t0)
	m := message(t, e, 0)
	e.Players = ptr(1<<32 + 4)
	m.Event = &e // as decoded from an event Validate would have refused
	res, err := s.Ingest(t.Context(), []store.Message{m, message(t, events.Opened(listing(2), "crawl-int", t0), 1)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Inserted != 1 || res.DeadLettered != 1 {
		t.Fatalf("%+v, want the other event stored and this one a dead letter", res)
	}
	var reason string
	if err := db.QueryRow(t.Context(), "select error from booking_events_dead").Scan(&reason); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(reason, "out of range") {
		t.Errorf("dead letter's error %q, want PostgreSQL's out of range", reason)
	}
}
