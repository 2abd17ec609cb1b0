package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli/clitest"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// secretSubcommands is every subcommand that opens the database, as run's arguments.
func secretSubcommands(t *testing.T) [][]string {
	out := filepath.Join(t.TempDir(), "export.jsonl")
	return [][]string{
		{"run", "--metrics-addr=", "--bootstrap", "127.0.0.1:1"},
		{"migrate"},
		{"lifetimes"},
		{"lifetimes", "--summary", "--json"},
		{"export"},
		{"export", "--out", out},
		{"dead", "list"},
		{"dead", "show", "1"},
		{"dead", "retry"},
		{"dead", "retry", "--dry-run"},
		{"notifications"},
		{"notifications", "--json", "--status", "failed"},
	}
}

// TestNoPasswordInAnyOutput runs every subcommand with a password in DATABASE_URL (and once in
// --database-url), in every form libpq and pgx accept, against an unreachable port, a server that
// refuses the password and the real database (trust: it connects), and greps everything the
// command wrote and returned for the password.
func TestNoPasswordInAnyOutput(t *testing.T) {
	t.Parallel()
	_, realURL := storetest.NewDBURL(t)
	rc, err := pgxpool.ParseConfig(realURL)
	if err != nil {
		t.Fatal(err)
	}
	targets := []struct {
		name      string
		host      string
		port      int
		db        string
		wantError bool
		want      string // in the error or the output, besides host:port
	}{
		{"Unreachable", "127.0.0.1", clitest.UnreachablePort(t), "golf", true, ""},
		{"WrongPassword", "127.0.0.1", clitest.RefusingServer(t), "golf", true, "password authentication failed"},
		{"RealDatabase", rc.ConnConfig.Host, int(rc.ConnConfig.Port), rc.ConnConfig.Database, false, ""},
	}
	for _, tg := range targets {
		for _, form := range clitest.DSNForms(tg.host, tg.port, rc.ConnConfig.User, tg.db) {
			for _, viaFlag := range []bool{false, true} {
				if viaFlag && form.Name != "KeywordValueQuoted" && form.Name != "URLQuery" {
					continue
				}
				for _, args := range secretSubcommands(t) {
					name := tg.name + "/" + form.Name + "/" + strings.Join(args[:min(2, len(args))], "_")
					if viaFlag {
						name += "/flag"
					}
					t.Run(name, func(t *testing.T) {
						t.Parallel()
						env := map[string]string{"KAFKA_BOOTSTRAP": "127.0.0.1:1"}
						if viaFlag {
							args = append(slices.Clip(args), "--database-url", form.DSN)
						} else {
							env["DATABASE_URL"] = form.DSN
						}
						// run may retry a database or broker that is down; stop it after a while.
						ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
						defer cancel()
						var o, e bytes.Buffer
						err := run(ctx, args, envMap(env), &o, &e)
						all := o.String() + e.String()
						if err != nil {
							all += "\nERROR: " + err.Error()
						}
						for _, bad := range []string{clitest.Marker, form.Password} {
							if strings.Contains(all, bad) {
								t.Fatalf("%s with %s: the output contains the password (%q):\n%s", args, form.DSN, bad, all)
							}
						}
						switch {
						case !form.Valid:
							if err == nil || !strings.Contains(strings.ToLower(strings.ReplaceAll(err.Error(), "_", " ")), "database url") {
								t.Errorf("%s: error %v does not say that DATABASE_URL is unparsable", args, err)
							}
						case tg.wantError || args[0] == "run":
							if !strings.Contains(all, form.HostPort) || !strings.Contains(all, tg.want) {
								t.Errorf("%s: output and error do not name %s (and %q):\n%s", args, form.HostPort, tg.want, all)
							}
						default:
							if err != nil && !errors.Is(err, store.ErrNoDeadLetter) {
								t.Errorf("%s against the real database: %v", args, err)
							}
						}
					})
				}
			}
		}
	}
}
