//go:build chaos

package chaos_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer"
	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer/consumertest"
	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// Hostile course names, served as the text of a table cell (HTML-escaped, so the crawler reads
// exactly these strings).
var hostileNames = []string{
	`'); DROP TABLE booking_events; --`,
	`Robert'); DELETE FROM booking_events_dead WHERE ('1'='1`,
	`<script>alert(document.cookie)</script>`,
	`"; SELECT pg_sleep(30); --`,
	`\x00\\N\t|tab|`,
	`골프장 ☃ 🏌️ ‮RTL‬`, //nolint:staticcheck // ST1018: the bidi controls in the literal are the hostile input under test
	strings.Repeat("L", 20_000),
}

// TestHostileSite crawls a site that serves hostile content through the real path: crawler.Runner
// (Collect, Diff, snapshot, the state dir's spool) → kafkabus.SpoolPublisher → the private Kafka → consumer.Run → PostgreSQL.
// Every crawl must return within its bound; hostile text is stored verbatim or rejected with a
// count; pages that are too big, endless or never finish make the crawl incomplete, never hang it;
// a club answering 200 with a maintenance page (HTML) or {"msg":"SERVER_BUSY"} (JSON) fails its
// page, and two such crawls after a good one close nothing.
func TestHostileSite(t *testing.T) {
	stack(t)
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Topic(t, addr, 3)
	db := storetest.NewDB(t)
	crawlAt := time.Date(2026, 4, 1, 10, 0, 0, 0, site.Seoul()) // a Wednesday

	mux := http.NewServeMux()
	hostile := handleHostilePages(mux)
	names := handleNamePages(t, mux)
	maint := handleMaintenancePages(mux) // club B and club 138 answer 200 with a maintenance page / SERVER_BUSY
	srv := httptest.NewServer(mux)
	defer srv.Close()

	// A dead site first: its server accepts connections and never answers (robots.txt included);
	// only its 5 s deadline ends its crawl, and the other sites must not wait for it.
	holeAddr, holeAccepts := testkit.CountingBlackHole(t)
	sites, err := site.ParseSites([]byte(deadSiteYAML(holeAddr) + strings.TrimPrefix(hostileSitesYAML(srv.URL), "sites:\n")))
	if err != nil {
		t.Fatal(err)
	}
	logs := &testkit.SyncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var pubs []*kafkatest.Spooled // one per runner: each state dir has its spool
	attach := func(r *crawler.Runner) {
		pubs = append(pubs, kafkatest.SpoolRunner(t, r, kafkabus.PublisherConfig{Brokers: []string{addr}, Topic: topic, Logger: logger}))
	}
	runner := &crawler.Runner{Sites: sites, State: crawler.StateDir{Dir: t.TempDir()}, Logger: logger,
		Now: func() time.Time { return crawlAt }}
	attach(runner)

	msites, err := site.ParseSites([]byte(maintenanceSitesYAML(srv.URL)))
	if err != nil {
		t.Fatal(err)
	}
	mrunner := &crawler.Runner{Sites: msites, State: crawler.StateDir{Dir: t.TempDir()}, Logger: logger,
		Now: func() time.Time { return crawlAt }}
	attach(mrunner)

	cons := consumertest.Start(t, t.Context(), consumertest.NewReader(t, addr, topic, kafkatest.Name(t, "hostile")),
		store.New(db), consumer.Config{Logger: logger})

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	bySite := crawlHostile(ctx, t, runner, len(sites))
	names.crawl(t, ctx, srv.URL, attach, logger, crawlAt)
	crawlMaintenance(ctx, t, mrunner, &maint.down, &crawlAt)
	ps := closeHostilePublishers(t, pubs)
	testkit.WaitFor(t, time.Minute, "every published event stored", func() bool { return cons.Metrics.Consumed.Load() >= ps.Published })
	cons.Stop(t)

	checkHostileText(t, db, bySite["hostile-text"])
	checkHostilePages(t, bySite, logs)
	checkDeadSite(t, bySite["hostile-dead"], logs.String(), holeAccepts.Load())
	names.check(t, db)
	checkMaintenanceStored(t, db)
	stored, dead := count(t, db, "booking_events"), count(t, db, "booking_events_dead")
	t.Logf("stored %d events, %d dead letters; %d requests to the hanging page", stored, dead, hostile.hangs.Load())
	if int64(stored) != ps.Published || dead != 0 {
		t.Errorf("stored %d events and %d dead letters, want %d and 0", stored, dead, ps.Published)
	}
}

// crawlHostile runs the hostile sites' crawl once, which must end within ctx's 2 minutes, and
// returns each site's summary by source.
func crawlHostile(ctx context.Context, t *testing.T, runner *crawler.Runner, sites int) map[string]crawler.SiteSummary {
	t.Helper()
	start := time.Now()
	sum, runErr := runner.Run(ctx)
	took := time.Since(start)
	t.Logf("crawl of %d hostile sites took %v (err: %v)", sites, took, runErr)
	if ctx.Err() != nil {
		t.Fatalf("the crawl hung: still running after 2 minutes")
	}
	bySite := map[string]crawler.SiteSummary{}
	for _, s := range sum.Sites {
		t.Logf("site %s: complete=%v incomplete=%q pages=%d rows=%d rejected=%d failed_pages=%d opened=%d err=%v",
			s.Source, s.Complete, s.Incomplete, s.Pages, s.Rows, s.Rejected, len(s.FailedPages), s.Opened, s.Err)
		bySite[s.Source] = s
	}
	return bySite
}

// closeHostilePublishers closes the scenario's publishers and returns their stats added up,
// which must show every event sent, none failed.
func closeHostilePublishers(t *testing.T, pubs []*kafkatest.Spooled) kafkabus.PublisherStats {
	t.Helper()
	var ps kafkabus.PublisherStats
	for _, p := range pubs {
		st := p.CloseWithin(30 * time.Second)
		ps.Published, ps.Failed, ps.Queued = ps.Published+st.Published, ps.Failed+st.Failed, ps.Queued+st.Queued
	}
	t.Logf("publishers: published %d, failed %d, unsent %d", ps.Published, ps.Failed, ps.Queued)
	if ps.Failed != 0 || ps.Queued != 0 {
		t.Errorf("publishers did not send every event: %+v", ps)
	}
	return ps
}

// checkHostileText: hostile-text's crawl is complete with its bad rows rejected, every hostile
// name is stored verbatim once (or rejected when over the contract's bound), and every stored
// course name is valid UTF-8.
func checkHostileText(t *testing.T, db *pgxpool.Pool, text crawler.SiteSummary) {
	t.Helper()
	if !text.Complete || text.Rejected < 3 {
		t.Errorf("hostile-text: complete=%v rejected=%d; want a complete crawl with the bad date, price and empty course rejected", text.Complete, text.Rejected)
	}
	for _, name := range hostileNames {
		name = site.CleanText(name) // bidi controls dropped (invisible, they split a name), the rest verbatim
		var n int
		if err := db.QueryRow(t.Context(), "select count(*) from booking_events where course_name = $1", name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		want := 1
		if len(name) > events.MaxCourseNameBytes {
			want = 0 // over the contract's bound: the crawler rejects the row (field_too_long)
		}
		if n != want {
			t.Errorf("course %.60q (%d bytes) stored %d times, want exactly %d (verbatim, or rejected when over the bound)", name, len(name), n, want)
		}
	}
	var badUTF8 int
	rows, err := db.Query(t.Context(), "select course_name from booking_events")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		if !utf8.ValidString(s) {
			badUTF8++
		}
		if strings.Contains(s, "Raw") || strings.Contains(s, "UTF-8") {
			t.Logf("stored course name %q", s)
		}
	}
	if badUTF8 > 0 {
		t.Errorf("%d course names are not valid UTF-8", badUTF8)
	}
}

// checkHostilePages: the undecodable, too big, endless and hanging pages each made their crawl
// incomplete, and the undecodable page was logged once, for its site.
func checkHostilePages(t *testing.T, bySite map[string]crawler.SiteSummary, logs *testkit.SyncBuffer) {
	t.Helper()
	if bad := bySite["hostile-badutf8"]; bad.Complete || len(bad.FailedPages) != 1 || bad.Opened != 0 {
		t.Errorf("hostile-badutf8: complete=%v failed pages %d opened %d; want the undecodable page failed whole", bad.Complete, len(bad.FailedPages), bad.Opened)
	}
	if lines := logs.Lines("reason=undecodable"); len(lines) != 1 || !strings.Contains(lines[0], "site=hostile-badutf8") {
		t.Errorf("log lines with reason=undecodable: %q", lines)
	}
	if big := bySite["hostile-big"]; big.Complete || len(big.FailedPages) == 0 {
		t.Errorf("hostile-big (10 MB page over a 5 MB cap): complete=%v failed pages %d; want the page refused", big.Complete, len(big.FailedPages))
	}
	if endless := bySite["hostile-endless"]; endless.Complete || endless.Pages > 50 {
		t.Errorf("hostile-endless: complete=%v pages=%d; want the max_pages guard (50) to stop it", endless.Complete, endless.Pages)
	}
	if hang := bySite["hostile-hang"]; hang.Complete || len(hang.FailedPages) == 0 {
		t.Errorf("hostile-hang: complete=%v failed pages %d; want the page timed out", hang.Complete, len(hang.FailedPages))
	}
}

// checkDeadSite: the dead site's crawl ended at its deadline, incomplete with reason deadline and
// no error, closing nothing, and the healthy hostile-text site was crawled before it ended (the
// log's order), i.e. while it was in flight.
func checkDeadSite(t *testing.T, dead crawler.SiteSummary, logs string, accepts int64) {
	t.Helper()
	t.Logf("hostile-dead: %d connections to the black hole, failed pages %d", accepts, len(dead.FailedPages))
	if dead.Err != nil || dead.Complete || dead.Incomplete != crawler.IncompleteDeadline || dead.Closed != 0 || accepts == 0 {
		t.Errorf("hostile-dead: err=%v complete=%v incomplete=%q closed=%d, %d connections; want tried, then incomplete with reason deadline, no error, nothing closed",
			dead.Err, dead.Complete, dead.Incomplete, dead.Closed, accepts)
	}
	healthy := strings.Index(logs, `msg="site crawled" site=hostile-text`)
	deadline := strings.Index(logs, `msg="site deadline reached: the crawl is cancelled and closes nothing" site=hostile-dead`)
	if healthy < 0 || deadline < 0 || healthy > deadline {
		t.Errorf("log offsets: hostile-text crawled at %d, hostile-dead's deadline at %d; want the healthy site crawled first, while the dead one was in flight",
			healthy, deadline)
	}
}
