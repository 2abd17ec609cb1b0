package store_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/eventstest"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// viewColumns are the columns of the relation booking_lifetimes, in order.
func viewColumns(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	var cols []string
	if err := pool.QueryRow(t.Context(), `select array_agg(column_name::text order by ordinal_position)
		from information_schema.columns where table_schema = current_schema() and table_name = 'booking_lifetimes'`).Scan(&cols); err != nil {
		t.Fatal(err)
	}
	return cols
}

// mismatch names each view column without a Lifetime field and each field without a column.
func mismatch(cols []string) (out []string) {
	fields := store.LifetimeColumns()
	for _, c := range cols {
		if !slices.Contains(fields, c) {
			out = append(out, "column "+c+" has no field in store.Lifetime (add one with its db, json and csv tags)")
		}
	}
	for _, f := range fields {
		if !slices.Contains(cols, f) {
			out = append(out, "field db:\""+f+"\" of store.Lifetime has no column in booking_lifetimes")
		}
	}
	return out
}

// readAll runs the three queries that read Lifetime rows (lifetimes.sql, dashboard_listings.sql,
// dashboard_listing.sql) and returns the first error.
func readAll(t *testing.T, s *store.Store, key string) error {
	t.Helper()
	if _, err := s.Lifetimes(t.Context(), store.LifetimeFilter{}); err != nil {
		return err
	}
	return s.ReadOnly(t.Context(), store.ReadOptions{}, func(r *store.Reader) error {
		if _, err := r.ListingsPage(t.Context(), store.LifetimeFilter{}, "lifetime", true, 10, 0); err != nil {
			return err
		}
		rows, err := r.Listing(t.Context(), key)
		if err == nil && len(rows) != 1 {
			t.Errorf("Listing(%q): %d rows, want 1", key, len(rows))
		}
		return err
	})
}

// seededStore is a fresh database holding three open listings, and the key of the first.
func seededStore(t *testing.T) (*pgxpool.Pool, *store.Store, string) {
	t.Helper()
	pool := storetest.NewDB(t)
	s := store.New(pool)
	evs := eventstest.Events(3, "fields", time.Date(2026, 4, 27, 9, 0, 0, 0, time.UTC))
	msgs := make([]store.Message, len(evs))
	for i := range evs {
		msgs[i] = store.Message{Topic: "fields", Offset: int64(i), Event: &evs[i]}
	}
	if _, err := s.Ingest(t.Context(), msgs); err != nil {
		t.Fatal(err)
	}
	return pool, s, evs[0].ListingKey
}

// Every column of booking_lifetimes has a field in store.Lifetime and every field a column, so
// the queries' select * scans by name.
func TestLifetimeFieldsMatchTheView(t *testing.T) {
	t.Parallel()
	pool, s, key := seededStore(t)
	if m := mismatch(viewColumns(t, pool)); len(m) > 0 {
		t.Fatalf("booking_lifetimes and store.Lifetime differ:\n%s", strings.Join(m, "\n"))
	}
	if err := readAll(t, s, key); err != nil {
		t.Fatalf("reading booking_lifetimes by name: %v", err)
	}
}

// The guard above sees a column added to the view without a field, and a field whose column went
// away (what an edit of views/ alone would leave), and so do the scans of the three queries.
func TestLifetimeFieldsGuardSeesAViewEdit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, view, want string }{
		{"ColumnWithoutField", "select v.*, 72 as par from booking_lifetimes_before v", "column par has no field"},
		{"FieldWithoutColumn", "select " + strings.Join(slices.DeleteFunc(store.LifetimeColumns(), func(c string) bool { return c == "reopen_count" }), ", ") +
			" from booking_lifetimes_before", `field db:"reopen_count" of store.Lifetime has no column`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pool, s, key := seededStore(t)
			for _, q := range []string{"alter view booking_lifetimes rename to booking_lifetimes_before",
				"create view booking_lifetimes as " + tc.view} {
				if _, err := pool.Exec(t.Context(), q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			if m := mismatch(viewColumns(t, pool)); len(m) != 1 || !strings.Contains(m[0], tc.want) {
				t.Errorf("mismatch = %q, want one naming %q", m, tc.want)
			}
			if err := readAll(t, s, key); err == nil {
				t.Error("the queries read the edited view without an error")
			} else {
				t.Logf("the scan says: %v", err)
			}
		})
	}
}

// Every field of store.Lifetime names its column and its JSON key (an embedded events.Attributes'
// fields by their json names in the event); a duration's key says its unit (seconds, as
// LifetimesJSON writes it); no two CSV columns share a name.
func TestLifetimeTagsAreComplete(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeFor[store.Lifetime]()
	columns := 0
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Anonymous {
			if f.Type != reflect.TypeFor[events.Attributes]() {
				t.Errorf("field %s is embedded: only events.Attributes is", f.Name)
			}
			for j := range f.Type.NumField() {
				if name, _, _ := strings.Cut(f.Type.Field(j).Tag.Get("json"), ","); name == "" || name == "-" {
					t.Errorf("attribute %s has no json name to name its column", f.Type.Field(j).Name)
				}
			}
			columns += f.Type.NumField()
			continue
		}
		columns++
		db, js := f.Tag.Get("db"), f.Tag.Get("json")
		if db == "" || js == "" {
			t.Errorf("field %s: db %q, json %q; want both", f.Name, db, js)
		}
		if f.Type == reflect.TypeFor[time.Duration]() && !strings.HasSuffix(js, "_seconds") {
			t.Errorf("field %s is a duration written in seconds: its json key %q must end in _seconds", f.Name, js)
		}
	}
	seen := map[string]bool{}
	for _, csv := range store.LifetimeCSVHeader {
		if seen[csv] {
			t.Errorf("csv column %q twice", csv)
		}
		seen[csv] = true
	}
	if got := store.LifetimeColumns(); len(got) != columns || got[0] != "play_date" {
		t.Errorf("LifetimeColumns() = %q, want %d columns", got, columns)
	}
}
