package store_test

import (
	"strings"
	"testing"

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
