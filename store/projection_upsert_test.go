package store_test

import (
	"strings"
	"testing"

	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// The installed fold and recompute overwrite every column of listing_lifetimes but its key: their
// update lists (and the fold's insert list) come from the table, not from a hand-kept copy in projection_triggers.sql.
func TestProjectionUpsertsSetEveryColumn(t *testing.T) {
	t.Parallel()
	pool := storetest.NewDB(t)
	var cols []string
	if err := pool.QueryRow(t.Context(), `select array_agg(column_name::text order by ordinal_position)
		from information_schema.columns where table_schema = current_schema() and table_name = 'listing_lifetimes'`).Scan(&cols); err != nil {
		t.Fatal(err)
	}
	for fn, prefix := range map[string]string{"listing_lifetimes_recompute": "excluded.", "listing_lifetimes_after_insert": "n."} {
		var src string
		if err := pool.QueryRow(t.Context(), "select prosrc from pg_proc where proname = $1", fn).Scan(&src); err != nil {
			t.Fatalf("%s: %v", fn, err)
		}
		if strings.Contains(src, ":upsert_set") || strings.Contains(src, ":fold_set") || strings.Contains(src, ":all_columns") {
			t.Errorf("%s was installed with its placeholder:\n%s", fn, src)
		}
		for _, c := range cols {
			key := c == "listing_key" || c == "play_date"
			set := strings.Contains(src, prefix+`"`+c+`"`)
			if set == key {
				t.Errorf("%s: column %s set from %s: %v, want %v", fn, c, prefix, set, !key)
			}
		}
	}
}
