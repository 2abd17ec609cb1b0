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

// TestEventColumnsMatchTheTable holds the one definition of the row (eventrow.go) to the migrated
// table: every column but ingested_at (which takes its default), in table order, of its type.
func TestEventColumnsMatchTheTable(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	rows, err := db.Query(t.Context(), `select column_name, data_type from information_schema.columns
		where table_schema = current_schema() and table_name = 'booking_events' and column_name <> 'ingested_at'
		order by ordinal_position`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var table []string
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			t.Fatal(err)
		}
		table = append(table, name+" "+typ)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	got := store.EventColumnTypes()
	if strings.Join(got, "\n") != strings.Join(table, "\n") {
		t.Errorf("eventColumns and booking_events differ:\neventColumns:\n  %s\nbooking_events:\n  %s",
			strings.Join(got, "\n  "), strings.Join(table, "\n  "))
	}
}

// TestEventColumnsHoldThePayload: every booking_events column named after a field of the event
// holds what the stored payload says, over random histories that vary every nullable field; so
// a column whose value newEventRow forgets to set (always null, which the view and the fold would
// agree on) fails here.
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
			t.Errorf("booking_events.%s differs from the payload's %s in %d of %d rows (is it set in newEventRow?)", c, c, differ, len(msgs))
		}
		if set == 0 {
			t.Errorf("booking_events.%s is null in every row: the histories never set it", c)
		}
	}
	if checked < 8 {
		t.Errorf("only %d columns compared with the payload", checked)
	}
}
