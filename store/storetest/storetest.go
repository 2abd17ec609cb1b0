// Package storetest gives each test its own migrated PostgreSQL database, cloned in ~0.1 s from a
// template built once per set of migration and view files.
//
// The template is named after a hash of those files' contents, so editing a migration or a view
// makes the next test run build a new one. Building is guarded by a PostgreSQL advisory lock and
// an existence check, so parallel test binaries (go test ./...) never race. Old templates are left
// behind (a few MB each); drop golf_tmpl_* databases by hand if they pile up.
package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/migrations"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/views"
)

// DefaultURL is the local stack's PostgreSQL (compose/dev/stack up).
const DefaultURL = "postgres://golf@127.0.0.1:55432/golf?sslmode=disable"

// URL returns the admin database URL for tests: TEST_DATABASE_URL, else DATABASE_URL, else
// DefaultURL. It fails the test if PostgreSQL is unreachable: tests never skip.
func URL(t testing.TB) string {
	t.Helper()
	u := testkit.EnvOr(DefaultURL, "TEST_DATABASE_URL", "DATABASE_URL")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, u)
	if err == nil {
		err = conn.Ping(ctx)
		conn.Close(ctx)
	}
	if err != nil {
		t.Fatalf("PostgreSQL at %s is unreachable: %v (run compose/dev/stack up, or set TEST_DATABASE_URL)", redact(u), err)
	}
	return u
}

// NewDB creates a fresh migrated database (tables and views) for this test and returns a pool on
// it. The database is dropped when the test ends.
func NewDB(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, _ := NewDBURL(t)
	return pool
}

// NewDBURL is NewDB that also returns the new database's URL, for code under test that opens its
// own connections (the consumer command).
func NewDBURL(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	ctx := t.Context()
	admin := URL(t)
	tmpl := templateName()
	templateOnce.Do(func() { templateErr = ensureTemplate(ctx, admin, tmpl) })
	if templateErr != nil {
		t.Fatalf("build template database %s: %v", tmpl, templateErr)
	}

	name := fmt.Sprintf("golf_test_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, seq.Add(1))
	if err := adminExec(ctx, admin, "create database "+name+" template "+tmpl); err != nil {
		t.Fatalf("create test database %s: %v", name, err)
	}
	dbURL, err := withDatabase(admin, name)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatalf("open pool on %s: %v", name, err)
	}
	t.Cleanup(func() {
		pool.Close()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := adminExec(ctx, admin, "drop database if exists "+name+" with (force)"); err != nil {
			t.Errorf("drop test database %s: %v", name, err)
		}
	})
	return pool, dbURL
}

var (
	templateOnce sync.Once
	templateErr  error
	seq          atomic.Int64
)

// templateName is golf_tmpl_ + the first 12 hex digits of a SHA-256 over the migration and view
// files.
func templateName() string {
	h := sha256.New()
	files, _ := fs.Glob(migrations.FS, "*.sql") // sorted by fs.Glob
	for _, f := range files {
		b, _ := fs.ReadFile(migrations.FS, f)
		fmt.Fprintf(h, "%s\x00%d\x00", f, len(b))
		h.Write(b)
	}
	for _, v := range append(slices.Clone(views.Sources), store.ProjectionSources...) {
		fmt.Fprintf(h, "view\x00%d\x00", len(v))
		h.Write([]byte(v))
	}
	return "golf_tmpl_" + hex.EncodeToString(h.Sum(nil))[:12]
}

// ensureTemplate builds the template database unless it exists. It is built under another name
// and renamed when complete, so a crash halfway never leaves a broken template behind.
func ensureTemplate(ctx context.Context, admin, name string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))

	sum := sha256.Sum256([]byte(name))
	lock := int64(binary.BigEndian.Uint64(sum[:8]))
	if _, err := conn.Exec(ctx, "select pg_advisory_lock($1)", lock); err != nil {
		return err
	}
	defer conn.Exec(context.WithoutCancel(ctx), "select pg_advisory_unlock($1)", lock) //nolint:errcheck

	var exists bool
	if err := conn.QueryRow(ctx, "select exists (select 1 from pg_database where datname = $1)", name).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	build := name + "_build"
	if _, err := conn.Exec(ctx, "drop database if exists "+build+" with (force)"); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "create database "+build); err != nil {
		return err
	}
	buildURL, err := withDatabase(admin, build)
	if err != nil {
		return err
	}
	if err := migrate(ctx, buildURL); err != nil {
		return fmt.Errorf("migrate %s: %w", build, err)
	}
	_, err = conn.Exec(ctx, "alter database "+build+" rename to "+name)
	return err
}

func migrate(ctx context.Context, dbURL string) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if err := migrations.Apply(ctx, conn); err != nil {
		return err
	}
	if err := views.Install(ctx, conn); err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	_, err = store.New(pool).EnsureProjection(ctx)
	return err
}

func adminExec(ctx context.Context, admin, sql string) error {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, sql)
	return err
}

// withDatabase returns admin with its database replaced by name.
func withDatabase(admin, name string) (string, error) {
	u, err := url.Parse(admin)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("test database URL %s is not a postgres:// URL", redact(admin))
	}
	u.Path = "/" + name
	return u.String(), nil
}

func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return strings.Replace(u.Redacted(), "xxxxx", "***", 1)
}
