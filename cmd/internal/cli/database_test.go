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
