package consumerbench_test

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// databases makes the contenders' fresh databases: the first one a binary asks for is a template,
// made by its own `migrate`; every run then gets a copy of that template (CREATE DATABASE ...
// TEMPLATE: the same catalog and files, without a migrate per run), dropped as soon as the run is
// timed, so the rounds' rows never pile up on disk.
type databases struct {
	b         *testing.B
	admin     *url.URL
	templates map[string]string // binary → its template database
}

func newDatabases(b *testing.B) *databases {
	u, err := url.Parse(storetest.URL(b))
	if err != nil {
		b.Fatal(err)
	}
	return &databases{b: b, admin: u, templates: map[string]string{}}
}

// name is a fresh database name.
func (d *databases) name(prefix string) string {
	return strings.NewReplacer("-", "_", ".", "_").Replace(strings.ToLower(kafkatest.Name(d.b, prefix)))
}

// urlOf is the URL of the database name on the admin's server.
func (d *databases) urlOf(name string) string {
	u := *d.admin
	u.Path = "/" + name
	return u.String()
}

// fresh is a new database with bin's schema and triggers, and the drop that removes it.
func (d *databases) fresh(bin string) (dbURL string, drop func()) {
	b := d.b
	b.Helper()
	admin := d.admin.String()
	tmpl, ok := d.templates[bin]
	if !ok {
		tmpl = d.name("golf_tmpl")
		adminExec(b, admin, "create database "+tmpl)
		b.Cleanup(func() { adminExec(b, admin, "drop database if exists "+tmpl+" with (force)") })
		cmd := exec.Command(bin, "migrate", "--database-url", d.urlOf(tmpl))
		cmd.Env = append(os.Environ(), "LOG_LEVEL=warn")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s migrate: %v\n%s", bin, err, out)
		}
		d.templates[bin] = tmpl
	}
	name := d.name("golf_proc")
	adminExec(b, admin, "create database "+name+" template "+tmpl)
	dropped := false
	drop = func() {
		if !dropped {
			dropped = true
			adminExec(b, admin, "drop database if exists "+name+" with (force)")
		}
	}
	b.Cleanup(drop)
	return d.urlOf(name), drop
}

// checkpoint flushes the shared server's dirty pages, so that no contender pays for a checkpoint
// another one caused.
func checkpoint(b *testing.B) {
	b.Helper()
	adminExec(b, storetest.URL(b), "checkpoint")
}

func adminExec(b *testing.B, admin, sql string) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, err := pgxpool.New(ctx, admin)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, sql); err != nil {
		b.Fatalf("%s: %v", sql, err)
	}
}
