// Package dev holds compose/dev/sites.yaml for Go code: the one definition of the sites that crawl
// the simulated booking site (crawler/sitesim). crawler/practice takes its sim-golf entry from it
// (pointed at its in-memory host), and compose/app/sites.yaml is derived from it (the same file
// pointed at the compose service sim, without dev_defaults; `go test ./crawler -run
// TestShippedSitesFilesAgree -update` rewrites it, and the test fails when the two drift).
package dev

import _ "embed"

// SitesYAML is the contents of compose/dev/sites.yaml.
//
//go:embed sites.yaml
var SitesYAML []byte
