package site

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"gopkg.in/yaml.v3"
)

// Every shipped sites file, the simulator's corpus entries (sitesim.CorpusYAML), and the fixtures
// the tests and the README build sites from, compile to the same sites: the keys with their
// defaults filled in, the list the rows are looked for in, the allowed domains, and what the site
// asks for on a fixed date (its start URLs, or its requests).
// The snapshot is written from the sites' YAML keys with zero values left out, so it holds whatever
// shape the Go types take.
func TestShippedSitesCompileGolden(t *testing.T) {
	t.Parallel()
	read := func(rel string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "..", rel))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	files := []struct{ name, yaml string }{
		{"compose-dev", string(read("compose/dev/sites.yaml"))},
		{"compose-app", string(read("compose/app/sites.yaml"))},
		{"readme-example", readmeSitesExample(t)},
		{"sitesim-fixtures", "sites:\n" + sitesim.EUCKRSite("sim-euckr", "http://127.0.0.1:8089") +
			sitesim.TeeListSite("sim-tee", "http://127.0.0.1:8089/tee")},
		{"sitesim-corpus", string(sitesim.CorpusYAML)},
	}
	for _, f := range files {
		sites, err := ParseSites([]byte(f.yaml))
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		var out []any
		for i := range sites {
			out = append(out, compiledSnapshot(t, sites[i]))
		}
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		testkit.Golden(t, filepath.Join("testdata", "compiled", f.name+".json"), append(b, '\n'))
	}
}

// compiledSnapshot is a compiled site as data: its keys (zero values left out), the derived list
// and what it requests on 2026-03-14 in Asia/Seoul.
func compiledSnapshot(t *testing.T, s *Site) map[string]any {
	t.Helper()
	b, err := yaml.Marshal(s.SiteSpec)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]any
	if err := yaml.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 14, 9, 0, 0, 0, Seoul())
	urls, err := s.URLs(at)
	if err != nil {
		t.Fatal(err)
	}
	reqs, sets, err := s.PageRequests(at)
	if err != nil {
		t.Fatal(err)
	}
	var asks []string
	for _, r := range reqs {
		asks = append(asks, fmt.Sprintf("set %d: %s %v", r.Set, r.Key(), r.Header))
	}
	return map[string]any{
		"keys": pruneZero(keys),
		"compiled": map[string]any{
			"list":      s.list,
			"urls":      urls,
			"requests":  asks,
			"page_sets": len(sets),
		},
	}
}

// pruneZero drops the zero values (and the maps and lists left empty) of decoded YAML.
func pruneZero(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			if e = pruneZero(e); e != nil {
				out[k] = e
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		var out []any
		for _, e := range v {
			if e = pruneZero(e); e != nil {
				out = append(out, e)
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	default:
		if v == nil || reflect.ValueOf(v).IsZero() || v == "0s" { // a zero Duration
			return nil
		}
		return v
	}
}
