// Package site is the site model: what a sites file says about a booking site and what it compiles
// to, with nothing fetched. SiteSpec is a site as written (the YAML schema); ParseSites, LoadSites
// and SiteSpec.Compile check it once and make the read-only *Site that package crawler fetches,
// parses and diffs, and that check, try, suggest and practice read.
//
// Beside it, each in its own file: the cell table (cell.go, cellshape.go: the cells a row yields,
// how a raw row becomes an events.Listing or a Reject* reason, and the value shapes and name hints
// crawler suggest recognises each cell by), the normalisers (normalize.go, playdate.go), a site's
// times under `crawler run` (sitetimes.go), its request templates and their expansion
// (request.go), the specs of its login (login.go) and of its JSON answers (jsonpage.go), and the
// sites file's loading and check (site.go, compile.go, check.go). The forms that say what real
// club servers answer: a cell's fallback sources, a table's grid columns and a JSON row's groups
// (sources.go, fieldyaml.go for a field's YAML), and values captured from an earlier answer for
// the requests after it (capture.go).
//
// Sites show the round date without a year ("12/05(토)", "12월 5일 (토)"); PlayDate places it in
// the one year that puts it between 7 days before and 335 days after the crawl's date in
// Asia/Seoul, and checks the shown weekday against it. ParsePrice ("150,000원", "15만원"),
// ParsePlayers ("3~4명") and ParseTeeTime ("오후 1:05") do the same for the other cells. A cell
// that cannot be read is an error wrapping ErrBadRoundDate, ErrBadPrice, ErrBadPlayers or
// ErrBadTeeTime: the row is skipped and counted, never guessed.
//
// It imports neither colly nor package crawler (a depguard rule keeps it so), and crawler/sitesim
// imports nothing of the project, so this package's tests can use the simulator.
package site
