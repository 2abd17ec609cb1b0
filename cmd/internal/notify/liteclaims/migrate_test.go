package liteclaims_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/claimstoretest"
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

// TestOpenRewritesChatSpecsOfBefore (review 4 F7): a file whose chat watches fdee6ed stored
// (/watch's arguments as typed, schema version 5) is migrated to their canonical form with the
// meaning fdee6ed gave them ("88 CC": a cap of 88원 and the course cc).
func TestOpenRewritesChatSpecsOfBefore(t *testing.T) {
	t.Parallel()
	claimstoretest.CheckLegacyChatSpecs(t, func(t *testing.T, specs []string) notify.ChatStore {
		path := filepath.Join(t.TempDir(), "alerts.db")
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"schema.sql", "migrate_1_send_part.sql", "migrate_2_backlog.sql", "migrate_3_resend.sql",
			"migrate_4_chat.sql", "migrate_5_listing_index.sql"} {
			b, err := os.ReadFile(filepath.Join("queries", f))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(string(b)); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
		}
		for i, spec := range specs { // as fdee6ed's chat_add.sql and chat_name.sql left them
			if _, err := db.Exec("insert into chat_watches (name, channel, spec, created_at) values (?, 'tg', ?, 1)", fmt.Sprintf("chat-%d", i+1), spec); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.Exec("pragma user_version = 5"); err != nil {
			t.Fatal(err)
		}
		db.Close()
		return open(t, path)
	})
}
