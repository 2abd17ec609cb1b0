package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli/clitest"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// TestReplayDryRunNeverShowsThePassword: crawler replay --dry-run reads DATABASE_URL too; in every
// form, against an unreachable port, a server refusing the password and the real database, nothing
// it writes or returns contains the password.
func TestReplayDryRunNeverShowsThePassword(t *testing.T) {
	t.Parallel()
	p, _ := replayFile(t)
	_, realURL := storetest.NewDBURL(t)
	rc, err := pgxpool.ParseConfig(realURL)
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range []struct {
		name string
		port int
		db   string
		want string
	}{
		{"Unreachable", clitest.UnreachablePort(t), "golf", "connection refused"},
		{"WrongPassword", clitest.RefusingServer(t), "golf", "password authentication failed"},
		{"RealDatabase", int(rc.ConnConfig.Port), rc.ConnConfig.Database, ""},
	} {
		for _, form := range clitest.DSNForms(rc.ConnConfig.Host, tg.port, rc.ConnConfig.User, tg.db) {
			t.Run(tg.name+"/"+form.Name, func(t *testing.T) {
				t.Parallel()
				var o, e bytes.Buffer
				env := map[string]string{"DATABASE_URL": form.DSN}
				err := run(t.Context(), []string{"replay", "--dry-run", p}, func(k string) string { return env[k] }, &o, &e)
				all := o.String() + e.String()
				if err != nil {
					all += "\nERROR: " + err.Error()
				}
				for _, bad := range []string{clitest.Marker, form.Password} {
					if strings.Contains(all, bad) {
						t.Fatalf("replay --dry-run with %s: the output contains the password (%q):\n%s", form.DSN, bad, all)
					}
				}
				switch {
				case !form.Valid:
					if err == nil || !strings.Contains(err.Error(), "DATABASE_URL") {
						t.Errorf("error %v does not say that DATABASE_URL is unparsable", err)
					}
				case tg.want != "":
					if err == nil || !strings.Contains(err.Error(), form.HostPort) || !strings.Contains(err.Error(), tg.want) {
						t.Errorf("error %v does not name %s and %q", err, form.HostPort, tg.want)
					}
				default:
					if err != nil || !strings.Contains(all, "already stored: 0") {
						t.Errorf("dry run against the real database: %v\n%s", err, all)
					}
				}
			})
		}
	}
}
