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
	"github.com/golfcrawler/golf-crawler/events"
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

// TestOpenMigratesToPending (#51 item 3): a file of schema version 6 gets the pending and withheld
// states (a rebuild of the claims table): its claims keep their rows and seq, a new claim is
// numbered after them, and a pending claim can be stored.
func TestOpenMigratesToPending(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "alerts.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"schema.sql", "migrate_1_send_part.sql", "migrate_2_backlog.sql", "migrate_3_resend.sql",
		"migrate_4_chat.sql", "migrate_5_listing_index.sql", "migrate_6_chat_specs.sql"} {
		b, err := os.ReadFile(filepath.Join("queries", f))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(string(b)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	if _, err := db.Exec(`insert into claims (seq, key, watch, channel, event_id, crawl_id, listing_key, occurred_at, event, status,
		send_key, send_part, send_parts, backlog, claimed_at, updated_at) values (41, ?, 'w', 'a', ?, 'c1', 'l', 1, '{}', 'sending', ?, 1, 2, 1, 1, 1)`,
		uuid.NewString(), uuid.NewString(), uuid.NewString()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("pragma user_version = 6"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	st := open(t, path)
	gs, err := st.Pick(t.Context(), &notify.Channel{Name: "a", Type: notify.Discord}, time.Now(), 10)
	if err != nil || len(gs) != 1 || gs[0].Part != 1 || gs[0].Parts != 2 || !gs[0].Claims[0].Backlog {
		t.Fatalf("pick after the migration: %+v, %v; want the old claim, part 1 of 2, backlog", gs, err)
	}
	price := int64(1)
	e := events.Opened(events.Listing{Source: "s", CourseName: "c", PlayDate: "2026-12-05", TeeTime: "07:00",
		Values: events.Values{PriceKRW: &price}}, "c2", time.Now())
	got, err := st.Claim(t.Context(), notify.ClaimBatch{Now: time.Now(), Claims: []notify.Claim{
		{Key: notify.ClaimKey("w", "a", e.EventID), Watch: "w", Channel: "a", Event: &e, Pending: true}}})
	if err != nil || len(got) != 1 || got[0].Status != notify.StatusPending {
		t.Fatalf("a pending claim after the migration: %+v, %v", got, err)
	}
	st.Close()
	db, err = sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var seq int
	var version int
	if err := db.QueryRow("select seq from claims where status = 'pending'").Scan(&seq); err != nil || seq <= 41 {
		t.Errorf("the new claim's seq %d (%v), want after the old claims' 41", seq, err)
	}
	if err := db.QueryRow("pragma user_version").Scan(&version); err != nil || version != 7 {
		t.Errorf("schema version %d (%v), want 7", version, err)
	}
}
