package liteclaims_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
)

// TestOpenMigratesAnOlderFile: a file made before the split (schema.sql alone, user_version 0)
// gets the send_part columns once, and its claims are kept.
func TestOpenMigratesAnOlderFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "alerts.db")
	schema, err := os.ReadFile("queries/schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(string(schema)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`insert into claims (key, watch, channel, event_id, crawl_id, listing_key, occurred_at, event, status,
		send_key, claimed_at, updated_at) values (?, 'w', 'a', ?, 'c1', 'l', 1, '{}', 'sending', ?, 1, 1)`,
		uuid.NewString(), uuid.NewString(), uuid.NewString()); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for range 2 { // the second Open finds it migrated
		st := open(t, path)
		gs, err := st.Pick(t.Context(), &notify.Channel{Name: "a", Type: notify.Discord}, time.Now(), 10)
		if err != nil || len(gs) != 1 || gs[0].Parts != 0 {
			t.Fatalf("pick after the migration: %+v, %v; want the old claim's group, not numbered", gs, err)
		}
		st.Close()
	}
}
