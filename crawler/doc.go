// Package crawler turns tee-time listing pages of Korean golf booking sites into booking events.
//
// What a site is, with nothing fetched (its sites-file spec, the compiled site, the cell table,
// the normalisers and the play date, its times, its request templates), is package
// crawler/site; this package fetches, parses, diffs and runs. A crawl of one source goes through
// four steps, each in its own file:
//
//  1. Site adapters (collect*.go, requestcrawl.go) fetch a source's pages with colly and read each
//     row of its tee-time table into an events.Listing. They are configured per site, not coded
//     (site.SiteSpec): start URLs or a URL template of HTML pages, or request templates (GET or
//     POST with a form or JSON body, per play date and per target such as a club) answered with
//     HTML or JSON (jsonpage.go: gjson paths, a success condition, what a sold-out answer looks
//     like), fields read from the row or from the request, and an optional login (login.go).
//  2. Normalizers (crawler/site) turn the cells' text into the contract's values: the round date
//     without a year becomes a play date (site.PlayDate), prices, player counts and tee times
//     their numbers and clock (site.ParsePrice, site.ParsePlayers, site.ParseTeeTime). A cell that
//     cannot be read rejects its row (a site.Reject* reason): skipped and counted, never guessed.
//  3. Diff (diff.go) compares the crawl with the source's previous Snapshot (snapshot.go) and emits
//     listing_opened, listing_changed (price or players) and listing_closed events whose ids are
//     derived from the transition (events.TransitionID: listing, epoch, lifetime, change number),
//     never from the crawl, so re-diffing the same snapshot in any later crawl yields the same
//     ids. Closing is guarded against partial crawls: only a complete crawl counts a missing
//     listing as a miss; Collapsed marks a crawl with fewer than half the last complete crawl's
//     listings as incomplete until the collapse repeats with the same listings
//     DefaultCollapseCrawls (3) times; a listing closes as booked after DefaultMissesToClose (2)
//     misses in a row, or as expired when its tee time had passed at its first miss; the close
//     is stamped at that first miss.
//  4. StateDir (state.go) keeps each source's Snapshot in one JSON file, replaced atomically, so
//     that the next crawl, even after a restart, diffs against the last one; StateDir.Lock
//     (lock.go) keeps a second crawler off the dir.
//
// Runner (runner.go) ties the steps together for every configured site: collect, gate on
// completeness, diff, append the events to the state dir's spool (Runner.Spool, one fsynced
// batch), save the snapshot naming the batch, then commit the batch, which makes it sendable (by
// kafkabus.SpoolPublisher, in the background: Kafka never blocks the crawl) and copies it to the
// --events-out log (sitecrawl.go emit): the one way out of a crawl. A save that failed with the
// old snapshot still in place publishes nothing, and the next crawl derives the same events,
// same ids, again; one whose new snapshot is in place (only its directory sync failed) commits.
// Sites are crawled in parallel (sitecrawl.go, up to Runner.MaxSites), each bounded by its
// deadline, with politeness shared per host across them (hostlimit.go).
// Schedule (schedule.go) runs the Runner on a robfig/cron spec in Asia/Seoul, skipping a run
// while the previous one is still going and recovering panics. The Runner's counters go to its
// RunMetrics hook (metrics.go) and /healthz's state is Health (health.go); cmd/crawler serves
// them with Prometheus as /metrics and /healthz, so this package imports no metrics library.
// Subpackages: site (the site model, above), sitesim (the simulated booking site), practice (the
// deterministic practice set) and replay (acknowledged re-publishing of recorded events).
//
// Everything here takes its clock and location from the caller (Crawl.At, DiffOptions.Location,
// Runner.Now); only site.Seoul loads a zone, from the embedded time/tzdata.
package crawler
