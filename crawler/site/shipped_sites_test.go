package site

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
)

var update = flag.Bool("update", false, "rewrite compose/app/sites.yaml from the dev sites file (goldens: UPDATE_GOLDENS=1)")

// The simulator's sites have one definition, crawler/sitesim/sites.yaml (sitesim.SitesYAML). The
// dev sites file (the crawler's default) is the same sites; the Docker one is them pointed at the
// compose service "sim": the same sites, keys and politeness, only the host differs, and the
// simulator's development login (dev_defaults) is in the dev file only. Both files load. With
// -update this test rewrites both files' sites from sitesim's (their header comments stay).
func TestShippedSitesFilesAgree(t *testing.T) {
	t.Parallel()
	_, simBody, _ := strings.Cut(string(sitesim.SitesYAML), "\nsites:\n")
	devFile := filepath.Join("..", "..", "compose", "dev", "sites.yaml")
	if b, err := os.ReadFile(devFile); err != nil {
		t.Fatal(err)
	} else if header, devBody, _ := strings.Cut(string(b), "\nsites:\n"); devBody != simBody {
		if !*update {
			t.Fatalf("compose/dev/sites.yaml drifted from crawler/sitesim/sites.yaml: edit the latter, then run with -update")
		}
		if err := os.WriteFile(devFile, []byte(header+"\nsites:\n"+simBody), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dev, err := LoadSites(filepath.Join("..", "..", "compose", "dev", "sites.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	app, err := LoadSites(filepath.Join("..", "..", "compose", "app", "sites.yaml"))
	if err != nil {
		t.Fatalf("compose/app/sites.yaml: %v", err)
	}
	if len(dev) != len(app) || len(dev) != 5 {
		t.Fatalf("want the same five sites in each file, got %d and %d", len(dev), len(app))
	}
	for i := range dev {
		if dev[i].Name != app[i].Name || app[i].AllowedDomains[0] != "sim" || dev[i].AllowedDomains[0] != "127.0.0.1" {
			t.Fatalf("site %d: dev %s %v, app %s %v", i, dev[i].Name, dev[i].AllowedDomains, app[i].Name, app[i].AllowedDomains)
		}
	}
	body := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", "compose", name, "sites.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		_, after, _ := strings.Cut(string(b), "\nsites:\n")
		return after
	}
	devBody, appBody := body("dev"), body("app")
	if !strings.Contains(devBody, "\n      dev_defaults: {user: golfer, password: "+sitesim.DevPassword+"}") || strings.Contains(appBody, "dev_defaults") {
		t.Fatal("the development login must be in compose/dev/sites.yaml, and only there")
	}
	var kept []string
	for _, line := range strings.Split(devBody, "\n") {
		if !strings.Contains(line, "dev_defaults:") {
			kept = append(kept, line)
		}
	}
	want := strings.NewReplacer("127.0.0.1:8089", "sim:8089", `["127.0.0.1"]`, `["sim"]`).Replace(strings.Join(kept, "\n"))
	if *update && appBody != want { // compose/app/sites.yaml is derived: keep its header, rewrite its sites
		appFile := filepath.Join("..", "..", "compose", "app", "sites.yaml")
		b, err := os.ReadFile(appFile)
		if err != nil {
			t.Fatal(err)
		}
		header, _, _ := strings.Cut(string(b), "\nsites:\n")
		if err := os.WriteFile(appFile, []byte(header+"\nsites:\n"+want), 0o644); err != nil {
			t.Fatal(err)
		}
		appBody = body("app")
	}
	if got := appBody; got != want {
		t.Fatalf("the two sites files drifted apart:\ndev (as app) %s\napp %s", want, got)
	}
}

// The sites file reference's example of every shape (docs/sites.md) is a valid sites file.
func TestREADMESitesExample(t *testing.T) {
	t.Parallel()
	sites, err := ParseSites([]byte(readmeSitesExample(t)))
	if err != nil {
		t.Fatalf("docs/sites.md's sites example: %v", err)
	}
	if len(sites) != 5 {
		t.Fatalf("%d sites in docs/sites.md's example, want one per shape (5)", len(sites))
	}
}

// readmeSitesExample is the sites example of docs/sites.md (after "One example per shape"), which
// was the README's before the reference moved to docs/.
func readmeSitesExample(t *testing.T) string { return docsSitesExample(t, "One example per shape") }

// docsSitesExample is the first YAML block of docs/sites.md after the text after.
func docsSitesExample(t *testing.T, after string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "sites.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), after)
	_, rest, ok2 := strings.Cut(rest, "```yaml\n")
	example, _, ok3 := strings.Cut(rest, "```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatalf("docs/sites.md has no sites example after %q", after)
	}
	return example
}
