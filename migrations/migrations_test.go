package migrations_test

import (
	"context"
	"io/fs"
	"regexp"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/tern/v2/migrate"

	"github.com/golfcrawler/golf-crawler/migrations"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

func TestNumbering(t *testing.T) {
	t.Parallel()
	files, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no migrations found: %v", err)
	}
	name := regexp.MustCompile(`^(\d{3})_[a-z0-9_]+\.sql$`)
	for i, f := range files {
		m := name.FindStringSubmatch(f)
		if m == nil {
			t.Fatalf("%s: want NNN_snake_case.sql", f)
		}
		if n, _ := strconv.Atoi(m[1]); n != i+1 {
			t.Fatalf("%s: number %d, want %d (gap or duplicate)", f, n, i+1)
		}
	}
	// tern's own loader agrees.
	if _, err := migrate.FindMigrations(migrations.FS); err != nil {
		t.Fatalf("tern rejects the migrations: %v", err)
	}
}

// TestApplyIdempotentAndConcurrent runs Apply from four connections at once on a database that
// storetest already migrated once, then on a fresh empty database, and checks the version.
func TestApplyIdempotentAndConcurrent(t *testing.T) {
	t.Parallel()
	_, dbURL := storetest.NewDBURL(t) // migrated already: Apply must be a no-op
	want, _ := migrate.FindMigrations(migrations.FS)

	for _, tc := range []struct{ name, url string }{{"Migrated", dbURL}, {"Empty", emptyDB(t)}} {
		t.Run(tc.name, func(t *testing.T) {
			errs := make(chan error, 4)
			for range 4 {
				go func() {
					conn, err := pgx.Connect(t.Context(), tc.url)
					if err != nil {
						errs <- err
						return
					}
					defer conn.Close(context.WithoutCancel(t.Context()))
					errs <- migrations.Apply(t.Context(), conn)
				}()
			}
			for range 4 {
				if err := <-errs; err != nil {
					t.Fatalf("concurrent Apply: %v", err)
				}
			}
			conn, err := pgx.Connect(t.Context(), tc.url)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.WithoutCancel(t.Context()))
			if err := migrations.Apply(t.Context(), conn); err != nil {
				t.Fatalf("second Apply: %v", err)
			}
			var v int
			if err := conn.QueryRow(t.Context(), "select version from "+migrations.VersionTable).Scan(&v); err != nil {
				t.Fatal(err)
			}
			if v != len(want) {
				t.Fatalf("schema_version = %d, want %d", v, len(want))
			}
			var rows int
			if err := conn.QueryRow(t.Context(), "select count(*) from "+migrations.VersionTable).Scan(&rows); err != nil || rows != 1 {
				t.Fatalf("schema_version has %d rows (%v), want 1", rows, err)
			}
		})
	}
}

// emptyDB makes a test database and empties it of everything the template put there.
func emptyDB(t *testing.T) string {
	pool, dbURL := storetest.NewDBURL(t)
	_, err := pool.Exec(t.Context(), "drop schema public cascade; create schema public")
	if err != nil {
		t.Fatal(err)
	}
	return dbURL
}
