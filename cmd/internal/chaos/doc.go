// Package chaos is the release gate's fault-injection suite: the whole pipeline (crawler runner,
// publisher, Kafka, the booking-consumer binary or its loop, PostgreSQL) under the faults users
// will meet, each scenario bounded in time and sized from the environment.
//
// The tests are build-tagged (//go:build chaos), so `go test ./...` and `make test` never compile
// them. They run only through their own command, which starts a PRIVATE stack (its own
// PostgreSQL and Kafka broker in .stack/chaos on ports 56432 / 29092 / 29093), because the suite
// stops and restarts them; the shared dev stack is never touched:
//
//	compose/dev/chaos            # the full suite (about 15-25 minutes)
//	CHAOS_QUICK=1 compose/dev/chaos   # smaller sizes, 30 s soak (about 5-8 minutes)
//	compose/dev/chaos --help
//
// Scenarios and what they assert:
//
//   - TestSIGKILLConsumer: the booking-consumer binary drains CHAOS_EVENTS (100,000) events with
//     1% poison and 2% repeated events mixed in, and is killed with SIGKILL at CHAOS_KILLS (20)
//     random moments while it makes progress. After each kill the group's committed offsets are
//     checked against the database (never an offset ahead of its rows). At the end: rows ==
//     distinct valid event ids, dead letters == poison messages, committed == end offsets.
//   - TestPostgresRestart: consumer.Run drains CHAOS_PG_EVENTS (50,000) while the private
//     PostgreSQL is stopped (fast, then immediate) and started again twice. Every offset commit is
//     checked against the database before it reaches Kafka. At the end: no loss, no duplicates.
//   - TestHostileSite: an httptest site serves SQL-injection strings, script tags, invalid UTF-8,
//     a 10 MB page, endless pagination and a page that never finishes, through the real
//     crawler.Runner (Collect, Diff, the state dir's spool and its publisher) and consumer.Run into PostgreSQL: every
//     crawl returns within its bound, hostile text is stored verbatim or rejected with a count,
//     nothing crashes or hangs.
//   - TestBrokerRestart: the crawler runs every 2 s against the simulated site while the private
//     broker is stopped and restarted twice (SIGTERM, then SIGKILL): the events wait in the state
//     dir's spool, nothing is given up, and once the broker is back every event the crawls
//     committed is acknowledged and stored once; the runs keep their schedule and the consumer
//     resumes.
//   - TestSoak: CHAOS_SOAK (5m) of the crawler every 2 s against the simulated site on a
//     fast clock with failing pages, the broker flapping, the consumer running: goroutines and heap
//     flat, zero false closes against the simulator's ground truth, and booking_lifetimes statuses
//     equal to the ground truth as of one crawl interval before the end.
//   - TestReadOnlyStateDir: the crawler's state dir is remounted read-only (a bind mount; needs
//     root) for three crawls while a price changes and a listing disappears, then writable again:
//     the crawls that cannot save publish nothing, and PostgreSQL holds exactly the real
//     transitions (3 opened, 1 changed, 1 closed), no extra event ids.
//   - TestTwoCrawlersOneStateDir: the real crawler binary runs on a 1 s schedule; a second one
//     (`once`, then `run`) on the same state dir exits non-zero at once with "DIR is in use by
//     another crawler (pid N)" and crawls nothing; a third runs normally once the first stopped;
//     PostgreSQL holds no duplicate transition (per listing, opens and closes alternate).
//   - TestOversizeKeyPoison: the booking-consumer binary drains CHAOS_POISON_EVENTS (10,000)
//     valid events with one valid-looking event in the middle whose listing_key is 4,000 bytes
//     (built as JSON, bypassing the crawler; too large for a btree entry): every valid event
//     stored, exactly one dead letter, offsets committed to the end, no insert retried.
//   - TestBrokerOutageWithInflight4: the binary with --inflight 4 drains CHAOS_OUTAGE_EVENTS
//     (14,000) events while booking_events is locked so that batches pile up; the broker is
//     stopped for CHAOS_OUTAGE (60 s) and the lock released meanwhile, so offset commits fail:
//     the process survives without a restart, stores everything, commits to the end, no offset
//     ahead of its rows.
//   - TestLargeMessagesMemoryBound: the binary drains CHAOS_LARGE (1,000) junk messages of 900 KB:
//     each dead-lettered as a 4 KiB prefix with its length and SHA-256, peak RSS within the
//     documented bound (150 MB with the defaults).
//   - TestSIGKILLCrawlerAlerts: the crawler binary with --watches and no Kafka (crawler-side
//     alerts, claims in the state dir's alerts.db) is SIGKILLed once in each of
//     CHAOS_ALERT_PHASES (20) phases of a local site (4 tee times open, one price drops into a
//     watch): while a request is at the receiver, right after the phase's claims, or at a random
//     moment; a receiver that is slow and fails one request in ten. Each phase ends when every
//     match so far was delivered and no claim is left sending. At the end: no match lost, none
//     and no Idempotency-Key delivered more than twice, nothing delivered that is not a match.
//   - TestSIGTERMDuringAlertSend: the crawler binary (`run --watches`, no Kafka) is stopped with
//     SIGTERM five times while its messages (a webhook's and a Slack channel's) are at a receiver
//     that answers only once the crawler logs that it is stopping: every stop exits 0, no request
//     is abandoned, every match and every Idempotency-Key is delivered once, none left sending.
//   - TestFullStateDirDuringClaim: the crawler's state dir is on a small tmpfs the test mounts
//     (root); one of two sites opens 350 tee times with long names and the crawler (cmd/crawler's
//     test binary with a fault seam) fills the disk right after that crawl's spool append: the
//     claim fails as "disk full" naming alerts.db (never "corrupt"), the site's next crawl fails at
//     the spool's append naming the spool (the 350 events derived again), the other site is
//     crawled on; after a stop and freeing the space, a new crawler starts on the same alerts.db
//     and every match (the 350 claimed again) is delivered once.
//   - TestSpoolDamageDuringOutage: the crawler binary (`run`, Kafka only, 1 s schedule) crawls a
//     page whose six prices change at every request through a CHAOS_DAMAGE_OUTAGE (40 s) broker
//     outage and is SIGKILLed CHAOS_DAMAGE_KILLS (4) times during it; before each restart one
//     byte of a spool record (a commit record, a batch record, an abort record, in turn) is
//     flipped in its length, CRC or payload; one more kill after the broker is back. Once the
//     spool drained and its left-behind files are replayed, each listing's stored events (with the
//     damaged batch records' own, which are not sent) form one unbroken chain of price changes
//     ending at the page's price: nothing else lost, no id with another content.
//   - TestDirSyncFailsDuringOutage: the test binary re-executed as a crawler (Kafka, an events
//     file, 1 s schedule) whose state dir's directory sync (StateDir.SyncDir) fails one time in
//     three, after the snapshot's rename, crawls the same page through a CHAOS_SYNCFAIL_OUTAGE
//     (40 s) broker outage and is killed CHAOS_SYNCFAIL_KILLS (6) times, half during it: every
//     other start kills itself when a crawl whose sync failed reaches its commit (spool's OnStep),
//     the others are SIGKILLed at seeded moments. Each such crawl is committed ("snapshot saved,
//     durability unknown", or kept at the next start): the events file is one unbroken chain of
//     price changes per listing ending at the page's price, no id with two contents, and
//     PostgreSQL holds exactly the file.
//
// The in-process consumer runs the way the binary is deployed (compose: restart: unless-stopped):
// consumer.Run returns an error when its Reader fails (a refused broker makes FetchMessage fail),
// and the test restarts it after a second with a new Reader, counting the restarts.
//
// Not in CI: the suite needs minutes and restarts its own servers; run it before each release.
package chaos
