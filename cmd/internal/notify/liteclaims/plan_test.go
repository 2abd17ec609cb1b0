package liteclaims_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBacklogProbeReadsTheIndexAlone: the backlog claim's "already claimed in this lifetime"
// probe is one seek of the covering index claims_listing; without occurred_at in the index it
// read the row of every earlier claim of the listing, the cost that grew a first crawl's claim
// transaction with every claim kept (BenchmarkCrawlAlerts).
func TestBacklogProbeReadsTheIndexAlone(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "alerts.db")
	if err := open(t, path).Close(); err != nil {
		t.Fatal(err)
	}
	q, err := os.ReadFile("queries/claim_backlog_rows.sql")
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stmt := strings.Replace(string(q), "/*rows*/", "values (?, ?, ?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?, ?, ?)", 1)
	args := []any{1, 1}
	for range 2 {
		args = append(args, "k", "w", "a", "e", "c", "l", 1, "{}", "")
	}
	rows, err := db.Query("explain query plan "+stmt, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(plan, "\n")
	if !strings.Contains(text, "USING COVERING INDEX claims_listing (watch=? AND channel=? AND listing_key=? AND occurred_at>?)") {
		t.Fatalf("the backlog probe's plan:\n%s\nwant a search of the covering index claims_listing", text)
	}
}
