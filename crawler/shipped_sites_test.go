package crawler

import (
	"path/filepath"
	"reflect"
	"testing"
)

// The Docker sites file is the dev one pointed at the compose service "sim": same selectors,
// politeness and days, only the host differs.
func TestShippedSitesFilesAgree(t *testing.T) {
	t.Parallel()
	dev, err := LoadSites(filepath.Join("..", "compose", "dev", "sites.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	app, err := LoadSites(filepath.Join("..", "compose", "app", "sites.yaml"))
	if err != nil {
		t.Fatalf("compose/app/sites.yaml: %v", err)
	}
	if len(dev) != 1 || len(app) != 1 {
		t.Fatalf("want one site in each file, got %d and %d", len(dev), len(app))
	}
	d, a := dev[0], app[0]
	if a.AllowedDomains[0] != "sim" || d.AllowedDomains[0] != "127.0.0.1" {
		t.Fatalf("allowed domains: dev %v, app %v", d.AllowedDomains, a.AllowedDomains)
	}
	if d.Name != a.Name || d.Row != a.Row || d.NextPage != a.NextPage || d.DaysAhead != a.DaysAhead ||
		!reflect.DeepEqual(d.Fields, a.Fields) || !reflect.DeepEqual(d.Politeness, a.Politeness) {
		t.Fatalf("the two sites files drifted apart:\ndev %+v\napp %+v", d, a)
	}
}
