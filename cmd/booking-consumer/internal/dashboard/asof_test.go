package dashboard

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/store"
)

// statusCounts counts booking_lifetimes by status in the database itself, as of asOf (golf.now,
// the clock layer's setting) or, for the zero time, as of now().
func statusCounts(t *testing.T, pool *pgxpool.Pool, asOf time.Time) map[string]int {
	t.Helper()
	tx, err := pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(t.Context()) }()
	if !asOf.IsZero() {
		if _, err := tx.Exec(t.Context(), "select set_config('golf.now', $1, true)", asOf.Format(time.RFC3339Nano)); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := tx.Query(t.Context(), "select status, count(*)::int from booking_lifetimes group by 1")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	var st string
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&st, &n}, func() error { out[st] = n; return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// With a fixed as-of (serve --as-of), every number on the pages is as of then, statuses and
// lifetimes included: the practice set as of its last day has open listings, not all expired.
// Without one, the pages follow the database's clock.
func TestAsOfIsTheClockOfEveryNumber(t *testing.T) {
	pool, _ := practiceDB(t)
	for _, tc := range []struct {
		name string
		asOf func() time.Time
		want map[string]int
	}{
		{"as of the practice set's last day", func() time.Time { return practiceAsOf }, statusCounts(t, pool, practiceAsOf)},
		{"live", nil, statusCounts(t, pool, time.Time{})},
	} {
		if tc.asOf != nil && tc.want[store.StatusOpen] == 0 {
			t.Fatalf("%s: no open listing in booking_lifetimes as of %v: %v", tc.name, practiceAsOf, tc.want)
		}
		h := newTestHandler(t, pool, func(c *Config) { c.AsOf = tc.asOf })
		overview := get(t, h, "/").Body.String()
		for _, st := range []string{store.StatusOpen, store.StatusBooked, store.StatusExpired} {
			if card := fmt.Sprintf(`<span class="n">%d</span> %s</div>`, tc.want[st], st); !strings.Contains(overview, card) {
				t.Errorf("%s: the overview does not show %d %s", tc.name, tc.want[st], st)
			}
			list := get(t, h, "/listings?status="+st).Body.String()
			if total := fmt.Sprintf(`<span id="total">%d</span>`, tc.want[st]); tc.want[st] > 0 && !strings.Contains(list, total) {
				t.Errorf("%s: /listings?status=%s does not show %d rows", tc.name, st, tc.want[st])
			}
		}
		w := get(t, h, "/listings.csv?status=open")
		recs, err := csv.NewReader(w.Body).ReadAll()
		if err != nil || w.Code != http.StatusOK || len(recs) != tc.want[store.StatusOpen]+1 {
			t.Fatalf("%s: CSV of the open listings: %d, %v, %d records, want %d", tc.name, w.Code, err, len(recs), tc.want[store.StatusOpen]+1)
		}
		if tc.asOf == nil {
			continue
		}
		for _, r := range recs[1:] { // an open listing's lifetime runs up to as-of
			opened, err := time.Parse(time.RFC3339, r[6])
			if err != nil {
				t.Fatal(err)
			}
			if want := practiceAsOf.Sub(opened).Round(time.Second).String(); r[8] != want {
				t.Fatalf("%s: open since %s: lifetime %s, want %s (as of %v)", tc.name, r[6], r[8], want, practiceAsOf)
			}
		}
	}
}
