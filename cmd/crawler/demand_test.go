package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/telegramtest"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// clubSitesFile is a sites file of one site of page sets on the simulator at base: two clubs ×
// three dates (the simulator's JSON POST shape), its watched page sets crawled every 10 s (the
// least; a budget that holds none back) with no confirm crawl.
func clubSitesFile(t *testing.T, base string) string {
	t.Helper()
	return testkit.WriteTemp(t, "sites.yaml", `sites:
  - name: club
    schedule: "*/10 * * * *"
    watched_every: 10s
    watched_budget: 100
    confirm_after: 0s
    targets: [{id: 137, name: 파인힐스 CC}, {id: 138, name: 레이크&힐스 CC}]
    days_ahead: 2
    requests:
      - method: POST
        url: '`+base+`/api/v2/teetime/list'
        json: {clubId: '{{.Target.id}}', date: '{{.Date.Format "20060102"}}'}
    format: json
    json:
      rows: list
      success: {path: msg, equals: OK}
      empty_when:
        - {path: msg, equals: NO_DATA}
    fields:
      course: {value: '{{.Target.name}}'}
      course_part: {path: CourseName}
      round_date: {value: '{{.Date.Format "2006-01-02"}}'}
      tee_time: {path: bookTime}
      price: {path: greenFeeDC}
      players: {path: visitorCnt}
    politeness: {no_delay: true, ignore_robots_txt: true}
`)
}

// partialCrawls are the page-set crawls of the log: the "site crawled" lines with page_sets=1.
var partialCrawls = regexp.MustCompile(`"msg":"site crawled","site":"club","crawl_id":"[^"]+","page_sets":1,`)

// TestRunDemandFile (#51 item 1): `crawler run --demand FILE` (the Kafka path: nothing is sent)
// crawls the page set its watch can match on its own, every watched_every, and /metrics and
// /healthz show the site's oldest watched page set's age.
func TestRunDemandFile(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(sitesim.New(sitesim.Config{Seed: 5, TeeTimesPerDay: 4}))
	t.Cleanup(srv.Close)
	tomorrow := time.Now().In(sitesim.KST).AddDate(0, 0, 1).Format("2006-01-02")
	demand := testkit.WriteTemp(t, "watches.yaml", "channels:\n  tg: {type: telegram, token_env: TG_TOKEN, chat_id: \"1\"}\n"+
		"watches:\n  - name: pine\n    sources: [club]\n    courses: [파인]\n    play_dates: {from: "+tomorrow+", to: "+tomorrow+"}\n    channels: [tg]\n")
	addr := testkit.FreeAddr(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var logs testkit.SyncBuffer
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, []string{"run", "--sites", clubSitesFile(t, srv.URL), "--demand", demand, "--state-dir", t.TempDir(),
			"--metrics-addr", addr}, env(nil), &logs, &logs)
	}()
	testkit.WaitForf(t, 60*time.Second, func() string { return "two crawls of the watched page set:\n" + logs.String() },
		func() bool { return len(partialCrawls.FindAllString(logs.String(), -1)) >= 2 })
	_, metrics := testkit.Get(t, "http://"+addr+"/metrics")
	if !strings.Contains(metrics, `crawler_site_watched_oldest_age_seconds{source="club"}`) {
		t.Errorf("/metrics lacks the watched page set's age:\n%s", metrics)
	}
	var health struct {
		Status string `json:"status"`
		Sites  map[string]struct {
			Age *float64 `json:"watched_oldest_age_seconds"`
		} `json:"sites"`
	}
	_, body := testkit.Get(t, "http://"+addr+"/healthz")
	if err := json.Unmarshal([]byte(body), &health); err != nil {
		t.Fatal(err)
	}
	if health.Status != "ok" || health.Sites["club"].Age == nil {
		t.Errorf("/healthz %+v, want ok with the club's watched_oldest_age_seconds", health)
	}
	cancel()
	testkit.NoErr(t, errc, 20*time.Second, "run after cancel")
	if strings.Contains(logs.String(), "demand-only.invalid") {
		t.Error("the placeholder of a secret reached the log")
	}
}

// TestChatWatchStartsFastCrawling (#51): a watch made with /watch in the chat while `crawler
// run` runs (no watch asked for the club before) makes the page set it can match watched: it is
// crawled on its own within one watched_every of the answer.
func TestChatWatchStartsFastCrawling(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(sitesim.New(sitesim.Config{Seed: 5, TeeTimesPerDay: 4}))
	t.Cleanup(srv.Close)
	const token = "4545:demand-chat-token"
	bot := telegramtest.New(t, token)
	watches := testkit.WriteTemp(t, "watches.yaml", fmt.Sprintf(`channels:
  tg: {type: telegram, token_env: TG_TOKEN, chat_id: "100", base_url: %s, commands: true, min_interval: 0s}
watches:
  - {name: far, courses: [nowhere], channels: [tg]}
`, bot.URL()))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var logs testkit.SyncBuffer
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, []string{"run", "--sites", clubSitesFile(t, srv.URL), "--watches", watches, "--state-dir", t.TempDir(),
			"--metrics-addr", "off"}, env(map[string]string{"KAFKA_BOOTSTRAP": "", "TG_TOKEN": token}), &logs, &logs)
	}()
	testkit.WaitForf(t, 30*time.Second, func() string { return "the first crawl:\n" + logs.String() },
		func() bool { return strings.Contains(logs.String(), `"msg":"site crawled"`) })
	tomorrow := time.Now().In(sitesim.KST).AddDate(0, 0, 1).Weekday()
	id := bot.Say(100, "private", 100, "/watch "+[]string{"일", "월", "화", "수", "목", "금", "토"}[tomorrow]+" 파인")
	answer := testkit.Recv(t, bot.Sent, 20*time.Second, "the answer to /watch")
	if answer.ReplyTo != id*10 || strings.Contains(answer.Text, "수집 주기") {
		t.Fatalf("answer %q (to %d)", answer.Text, answer.ReplyTo)
	}
	before := len(partialCrawls.FindAllString(logs.String(), -1))
	testkit.WaitForf(t, 30*time.Second, func() string { return "a crawl of the watched page set:\n" + logs.String() },
		func() bool { return len(partialCrawls.FindAllString(logs.String(), -1)) > before })
	cancel()
	testkit.NoErr(t, errc, 30*time.Second, "run after cancel")
}

// TestSightingToSentObserved (#51 item 4): every match sent, backlog aside, is observed in
// booking_notifier_sighting_to_sent_seconds on the crawler's /metrics.
func TestSightingToSentObserved(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	wf := watchesFile(t, map[string]string{"hook": rc.srv.URL}, "  - name: all\n    channels: [hook]\n")
	g := newAlertsRig(t, sitesim.Config{Seed: 5, TeeTimesPerDay: 4, BookingSpeed: 4}, 2, wf)
	g.crawl(t)     // the first crawl: the backlog, not counted
	for range 24 { // a day: a new date enters the window at midnight in Seoul, whatever the hour now
		g.clock.Add(time.Hour)
		g.crawl(t)
	}
	want, _ := g.expected(t)
	delivered := 0 // the first crawl's backlog included
	for _, n := range rc.delivered() {
		delivered += n
	}
	families, err := g.metrics.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var observed uint64
	for _, f := range families {
		if f.GetName() == "booking_notifier_sighting_to_sent_seconds" {
			observed = f.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	if observed == 0 || int(observed) >= delivered || len(want["hook"]) == 0 {
		t.Fatalf("%d sends observed of %d matches delivered (the first crawl's backlog among them)", observed, delivered)
	}
}
