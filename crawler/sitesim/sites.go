package sitesim

import _ "embed"

// SitesYAML is crawler/sitesim/sites.yaml: the one definition of the sites that crawl the
// simulator, in every shape it serves. crawler/practice takes its sim-golf entry from it (pointed
// at its in-memory host); compose/dev/sites.yaml (the crawler's default sites file) and
// compose/app/sites.yaml (pointed at the compose service sim, without dev_defaults) are derived
// from it: `go test ./crawler/site -run TestShippedSitesFilesAgree -update` rewrites them, and the
// test fails when they drift.
//
//go:embed sites.yaml
var SitesYAML []byte
