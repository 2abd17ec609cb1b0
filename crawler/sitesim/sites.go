package sitesim

import (
	_ "embed"
	"strings"
)

// SitesYAML is crawler/sitesim/sites.yaml: the one definition of the sites that crawl the
// simulator, in every shape it serves. crawler/practice takes its sim-golf entry from it (pointed
// at its in-memory host); compose/dev/sites.yaml (the crawler's default sites file) and
// compose/app/sites.yaml (pointed at the compose service sim, without dev_defaults) are derived
// from it: `go test ./crawler/site -run TestShippedSitesFilesAgree -update` rewrites them, and the
// test fails when they drift.
//
//go:embed sites.yaml
var SitesYAML []byte

// CorpusYAML is crawler/sitesim/corpus.yaml: a hand-written sites entry for every shape of the
// simulator that SitesYAML does not crawl, at DefaultAddr (CorpusEntry takes one out).
//
//go:embed corpus.yaml
var CorpusYAML []byte

// CorpusEntry is the entry name of CorpusYAML as a list item of a sites file (its "  - name:"
// line and the lines under it, indented for "sites:"), its URLs at base (an httptest server's
// URL) instead of http://DefaultAddr. It panics for a name the file lacks: a typo in a test.
func CorpusEntry(name, base string) string {
	var b strings.Builder
	in := false
	for line := range strings.Lines(string(CorpusYAML)) {
		if strings.HasPrefix(line, "  - ") {
			in = line == "  - name: "+name+"\n"
		}
		if in {
			b.WriteString(line)
		}
	}
	if b.Len() == 0 {
		panic("sitesim: no entry " + name + " in corpus.yaml")
	}
	return strings.ReplaceAll(strings.TrimRight(b.String(), "\n")+"\n", "http://"+DefaultAddr, base)
}
