package store_test

import (
	"slices"
	"testing"

	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// identityColumns are listing_lifetimes' columns a refresh never changes: a listing's identity.
var identityColumns = []string{"listing_key", "play_date", "source", "course_name", "course_part", "tee_time"}

// TestProjectionIndexesOnlyIdentityColumns: no index of listing_lifetimes covers a column the fold
// changes (status, times, prices, counts), so a refresh that finds room on its page is a HOT update
// that writes no index (a status index made every close and reopen write all
// five indexes, and no filter on booking_lifetimes' status could use it: the view computes status
// from the clock). BenchmarkIngestProjection reports the share of HOT updates; how many there are
// depends on pruning, so on every transaction running at the time, which is why this test checks
// the table and not a share.
func TestProjectionIndexesOnlyIdentityColumns(t *testing.T) {
	t.Parallel()
	pool := storetest.NewDB(t)
	rows, err := pool.Query(t.Context(), `select i.indexrelid::regclass::text, a.attname
		from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
		where i.indrelid = 'listing_lifetimes'::regclass order by 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	indexes := map[string]bool{}
	for rows.Next() {
		var index, column string
		if err := rows.Scan(&index, &column); err != nil {
			t.Fatal(err)
		}
		indexes[index] = true
		if !slices.Contains(identityColumns, column) {
			t.Errorf("index %s covers %s, a column the projection's refresh changes: its updates can no longer be HOT", index, column)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(indexes) < 4 {
		t.Fatalf("listing_lifetimes has indexes %v, want the key, play date, course and source ones", indexes)
	}
}
