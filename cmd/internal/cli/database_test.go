package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli/clitest"
)

func TestDatabaseSecretsFindEveryForm(t *testing.T) {
	t.Parallel()
	for _, f := range clitest.DSNForms("db.example", 5433, "golf", "golf") {
		t.Run(f.Name, func(t *testing.T) {
			secrets := DatabaseSecrets(f.DSN)
			if !slices.Contains(secrets, f.Password) {
				t.Errorf("DatabaseSecrets(%s) = %q, lacks %q", f.DSN, secrets, f.Password)
			}
			if s := Scrub("connect "+f.DSN+" failed: "+f.Password, secrets); strings.Contains(s, clitest.Marker) {
				t.Errorf("Scrub left the password: %s", s)
			}
			desc := DescribeDatabase(f.DSN)
			if f.Valid && desc != "golf@db.example:5433/golf" {
				t.Errorf("DescribeDatabase(%s) = %q", f.DSN, desc)
			}
			if strings.Contains(desc, clitest.Marker) {
				t.Errorf("DescribeDatabase shows the password: %s", desc)
			}
		})
	}
	if s := DatabaseSecrets("postgres://golf@127.0.0.1:55432/golf?sslmode=disable"); len(s) != 0 {
		t.Errorf("a URL without a password has secrets %q", s)
	}
}

func TestScrubKeepsTheErrorChainAndEveryQuoting(t *testing.T) {
	t.Parallel()
	secrets := DatabaseSecrets(`host=h password='pa"ss\\w ` + clitest.Marker + `'`)
	err := ScrubError(fmt.Errorf("%w: %q and %s", ErrUsage, `pa"ss\w `+clitest.Marker, `pa\"ss\\w `+clitest.Marker), secrets)
	if !errors.Is(err, ErrUsage) || strings.Contains(err.Error(), clitest.Marker) {
		t.Errorf("ScrubError = %v (is usage: %v)", err, errors.Is(err, ErrUsage))
	}
	var b strings.Builder
	w := ScrubWriter(&b, secrets)
	if n, err := fmt.Fprintf(w, `{"err":"pa\"ss\\w %s"}`, clitest.Marker); err != nil || n == 0 || strings.Contains(b.String(), clitest.Marker) {
		t.Errorf("ScrubWriter wrote %q (%d, %v)", b.String(), n, err)
	}
	if ScrubError(nil, secrets) != nil {
		t.Error("ScrubError(nil) != nil")
	}
}

// TestOpenDatabaseNeverShowsThePassword opens every form of a DATABASE_URL with a password against
// an unreachable port and a server that refuses the password: each error names where it tried (or
// that the URL is unparsable) and never the password, without the commands' outer scrubbing.
func TestOpenDatabaseNeverShowsThePassword(t *testing.T) {
	t.Parallel()
	for _, target := range []struct {
		name string
		port int
		want string
	}{
		{"Unreachable", clitest.UnreachablePort(t), "connect to database"},
		{"WrongPassword", clitest.RefusingServer(t), "password authentication failed"},
	} {
		for _, f := range clitest.DSNForms("127.0.0.1", target.port, "golf", "golf") {
			t.Run(target.name+"/"+f.Name, func(t *testing.T) {
				t.Parallel()
				getenv := func(k string) string { return map[string]string{"DATABASE_URL": " " + f.DSN + " "}[k] }
				pool, err := OpenDatabase(t.Context(), DatabaseURL(getenv, ""), 0)
				if err == nil {
					pool.Close()
					t.Fatalf("OpenDatabase(%s) opened a pool", f.DSN)
				}
				msg := err.Error()
				if strings.Contains(msg, clitest.Marker) || strings.Contains(msg, f.Password) {
					t.Fatalf("OpenDatabase(%s): the error shows the password: %s", f.DSN, msg)
				}
				want := []string{"DATABASE_URL: cannot parse"}
				if f.Valid {
					want = []string{"golf@" + f.HostPort + "/golf", target.want}
				}
				for _, w := range want {
					if !strings.Contains(msg, w) {
						t.Errorf("OpenDatabase(%s) = %q, want it to name %q", f.DSN, msg, w)
					}
				}
			})
		}
	}
	if _, err := OpenDatabase(t.Context(), DatabaseURL(func(string) string { return "" }, " "), 0); !errors.Is(err, ErrUsage) {
		t.Errorf("OpenDatabase without a URL = %v, want ErrUsage", err)
	}
}
