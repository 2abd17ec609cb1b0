package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/golfcrawler/golf-crawler/crawler/practice"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// The browser tests drive a real Chromium (Debian's /usr/bin/chromium, or $CHROMIUM) against
// `booking-consumer serve` over a database holding the practice set. They never skip: without a
// browser they fail and say how to install one (make test installs it: compose/dev/deps).

const browserHostileCourse = `<script>alert("xss")</script> 악성 CC`

func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	t.Fatal("no Chromium for the dashboard's browser tests: install it with `apt-get install -y chromium fonts-nanum` " +
		"(make test does it through compose/dev/deps), or set CHROMIUM to a Chrome/Chromium binary")
	return ""
}

// practiceDatabase ingests the practice set and one listing with a hostile course name through
// store.Ingest (the consumer's path, without Kafka) and returns the database's URL.
func practiceDatabase(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	if _, err := practice.Generate(t.Context(), &buf, practice.Options{Days: 21, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	var evs []events.Event
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		e, err := events.Decode(line)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, e)
	}
	price, players := int64(99000), 4
	at := time.Date(2026, 4, 18, 9, 0, 0, 0, time.FixedZone("KST", 9*3600))
	h := events.Event{SchemaVersion: 1, Source: "sim-golf", CourseName: browserHostileCourse, RoundDate: "04/26(일)",
		PlayDate: "2026-04-26", TeeTime: "07:00", Values: events.Values{PriceKRW: &price, Players: &players}, CrawlID: "sim-golf@hostile",
		ListingKey: events.ListingKey("sim-golf", browserHostileCourse, "", "2026-04-26", "07:00")}
	o, c := h, h
	o.EventID, o.EventType, o.OccurredAt = uuid.NewSHA1(uuid.NameSpaceURL, []byte("hostile-o")), events.ListingOpened, at
	c.EventID, c.EventType, c.OccurredAt, c.CloseReason = uuid.NewSHA1(uuid.NameSpaceURL, []byte("hostile-c")), events.ListingClosed, at.Add(5*time.Hour), events.Booked
	evs = append(evs, o, c)

	pool, dbURL := storetest.NewDBURL(t)
	s := store.New(pool)
	for i := 0; i < len(evs); i += 1000 {
		var batch []store.Message
		for j := range evs[i:min(i+1000, len(evs))] {
			e := evs[i+j]
			v, err := events.Encode(e)
			if err != nil {
				t.Fatal(err)
			}
			batch = append(batch, store.Message{Topic: "booking-events", Partition: (i + j) % 3, Offset: int64((i + j) / 3),
				Key: []byte(e.ListingKey), Value: v, Event: &e})
		}
		if _, err := s.Ingest(t.Context(), batch); err != nil {
			t.Fatal(err)
		}
	}
	return dbURL
}

// startServe runs `booking-consumer serve` in-process on a free loopback port and returns its URL.
func startServe(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	out, errs := &testkit.SyncBuffer{}, &testkit.SyncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--http-addr", "127.0.0.1:0"}, args...), envMap(env), out, errs)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v\n%s", err, errs.String())
		}
	})
	re := regexp.MustCompile(`dashboard: (http://\S+)`)
	for range 200 {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			return strings.TrimSuffix(m[1], "/")
		}
		select {
		case err := <-done:
			t.Fatalf("serve exited: %v\n%s", err, errs.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("serve printed no URL:\n%s", errs.String())
	return ""
}

func newBrowser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromiumPath(t)), chromedp.NoSandbox,
		chromedp.Headless, chromedp.DisableGPU, chromedp.WindowSize(1280, 900), chromedp.Flag("lang", "ko-KR"))
	actx, cancelA := chromedp.NewExecAllocator(t.Context(), opts...)
	bctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelB(); cancelA() })
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start Chromium (%s): %v", chromiumPath(t), err)
	}
	return bctx
}

// must runs a browser action and returns its value, failing the test on error.
func must[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// open navigates to url and waits for the page's footer (the page is complete).
func open(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	must(t, ctx, "open "+url, chromedp.Steps(chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("footer"))))
}

// waitURL waits until the page's location contains s (after a form submit or a click).
func waitURL(t *testing.T, ctx context.Context, s string) {
	t.Helper()
	for range 400 {
		// While the navigation is under way the evaluation can land on the page being left:
		// Chromium answers that its target navigated or that the context is gone. Both mean "not
		// there yet"; any other error fails.
		loc, err := evaluateOnce[string](ctx, `location.href`)
		if err != nil && !navigating(err) {
			t.Fatalf("location: %v", err)
		}
		if err == nil && strings.Contains(loc, s) {
			must(t, ctx, "page "+loc, chromedp.WaitReady(chromedp.CSS("footer")))
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the page never reached a location with %q", s)
}

// evaluateOnce evaluates expr in the page, within a minute.
func evaluateOnce[T any](ctx context.Context, expr string) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](expr))
}

// navigating reports whether err is Chromium's answer to an evaluation that met a navigation.
func navigating(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Inspected target navigated or closed") ||
		strings.Contains(msg, "Execution context was destroyed") ||
		strings.Contains(msg, "Cannot find context with specified id")
}

func count(t *testing.T, ctx context.Context, sel string) int {
	t.Helper()
	return must(t, ctx, "count "+sel, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)))
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	return must(t, ctx, "text of "+sel, chromedp.Text(chromedp.CSS(sel)))
}

func attr(t *testing.T, ctx context.Context, sel, name string) string {
	t.Helper()
	return must(t, ctx, name+" of "+sel, chromedp.AttributeValue(chromedp.CSS(sel), name)).Value
}

// screenshotter returns shot(name), which saves a full-page screenshot in a temporary folder (and
// in $DASHBOARD_SCREENSHOTS; the overview also in views/ with UPDATE_SCREENSHOT=1).
func screenshotter(t *testing.T, ctx context.Context) func(name string) {
	shots := t.TempDir()
	return func(name string) {
		t.Helper()
		png := must(t, ctx, "screenshot", chromedp.FullScreenshot(100))
		p := filepath.Join(shots, name+".png")
		if err := os.WriteFile(p, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot %s (%d bytes)", p, len(png))
		if name == "overview" && os.Getenv("UPDATE_SCREENSHOT") == "1" {
			if err := os.WriteFile(filepath.Join("..", "..", "views", "dashboard-overview.png"), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if dir := os.Getenv("DASHBOARD_SCREENSHOTS"); dir != "" { // to look at them after the test
			_ = os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
		}
	}
}

func TestDashboardInABrowser(t *testing.T) {
	dbURL := practiceDatabase(t)
	env := map[string]string{"DATABASE_URL": dbURL}
	base := startServe(t, env, "--as-of", "2026-04-21")
	ctx := newBrowser(t)
	shot := screenshotter(t, ctx)
	browseOverview(t, ctx, base, shot)
	browseTimeToBook(t, ctx, base, env)
	totalBooked := browseListingsFilter(t, ctx, base, shot)
	browseCSV(t, ctx, base, env, totalBooked)

	// Sorting and paging by links.
	open(t, ctx, base+"/listings?sort=lifetime&dir=desc&size=25")
	if n, first := count(t, ctx, "#listings tbody tr"), text(t, ctx, "#listings tbody tr:first-child td:nth-child(9)"); n != 25 || first == "" {
		t.Fatalf("sorted page: %d rows (want 25), longest lifetime %q", n, first)
	}
	must(t, ctx, "next page", chromedp.Click(chromedp.CSS("#next")))
	waitURL(t, ctx, "page=2")

	browseHostileListing(t, ctx, base, shot)

	// Pipeline: without Kafka it says so; dead letters and the last ingest from PostgreSQL.
	open(t, ctx, base+"/pipeline")
	shot("pipeline")
	if page := text(t, ctx, "main"); count(t, ctx, "#kafka-off") != 1 || !strings.Contains(page, "last ingest") || !strings.Contains(page, "No dead letters") {
		t.Fatalf("pipeline page:\n%s", page)
	}
}

// browseOverview: six charts and one time-to-book panel per course, each with data points; no
// script anywhere.
func browseOverview(t *testing.T, ctx context.Context, base string, shot func(string)) {
	t.Helper()
	open(t, ctx, base+"/")
	shot("overview")
	panels := count(t, ctx, "#incidence figure.panel svg.chart")
	if n, s := count(t, ctx, "svg.chart"), count(t, ctx, "script"); panels == 0 || n != 6+panels || s != 0 {
		t.Fatalf("overview: %d charts (want 6 and %d time-to-book panels), %d script elements (want 0)", n, panels, s)
	}
	for _, id := range []string{"status", "hours", "incidence", "heatmap", "spread", "lead", "price"} {
		if n := count(t, ctx, "#"+id+" svg.chart .datum"); n == 0 {
			t.Errorf("overview chart #%s has no data points", id)
		}
	}
	// The statuses are as of --as-of too: on the practice set's last day some listings are still
	// open (at today's clock every one of them would be expired).
	if open := text(t, ctx, ".card .sw-open + .n"); open == "" || open == "0" {
		t.Errorf("overview as of 2026-04-21: %q open listings, want some", open)
	}
}

// browseListingsFilter: the filter form (no JavaScript needed) changes the table. It returns the
// filtered page's total.
func browseListingsFilter(t *testing.T, ctx context.Context, base string, shot func(string)) string {
	t.Helper()
	open(t, ctx, base+"/listings")
	all, totalAll := count(t, ctx, "#listings tbody tr"), text(t, ctx, "#total")
	shot("listings")
	must(t, ctx, "filter", chromedp.Steps(
		chromedp.SetValue(chromedp.CSS(`select[name="status"]`), "booked"),
		chromedp.SetValue(chromedp.CSS(`select[name="course"]`), "레이크&힐스 CC"),
		chromedp.Click(chromedp.CSS(`form.filters button[type="submit"]`))))
	waitURL(t, ctx, "status=booked")
	shot("listings-filtered")
	booked, totalBooked := count(t, ctx, "#listings tbody tr"), text(t, ctx, "#total")
	notBooked, otherCourse := count(t, ctx, "#listings tbody tr:not(.st-booked)"), 0
	for _, c := range must(t, ctx, "courses", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("#listings td.course")].map(td => td.textContent)`)) {
		if c != "레이크&힐스 CC" {
			otherCourse++
		}
	}
	if all == 0 || totalAll == totalBooked || booked == 0 || notBooked != 0 || otherCourse != 0 {
		t.Fatalf("listings: %d rows of %s unfiltered; filtered: %d rows of %s, %d not booked, %d of another course",
			all, totalAll, booked, totalBooked, notBooked, otherCourse)
	}
	return totalBooked
}

// browseCSV: the CSV the filtered page links to is `booking-consumer lifetimes --csv` with the
// same filters, and has the page's total of rows.
func browseCSV(t *testing.T, ctx context.Context, base string, env map[string]string, totalBooked string) {
	t.Helper()
	csvHref := attr(t, ctx, "#csv", "href")
	u, err := url.Parse(base + csvHref)
	if err != nil {
		t.Fatal(err)
	}
	if q := u.Query(); q.Get("status") != "booked" || q.Get("course") != "레이크&힐스 CC" {
		t.Fatalf("CSV link %q does not carry the filters", csvHref)
	}
	resp, err := http.Get(u.String())
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want, stderr, err := runCLI(t, t.Context(), env, "lifetimes", "--csv", "--status", "booked", "--course", "레이크&힐스 CC")
	if err != nil {
		t.Fatalf("lifetimes --csv: %v\n%s", err, stderr)
	}
	if resp.StatusCode != 200 || string(got) != want {
		t.Fatalf("the dashboard's CSV (%d, %d bytes) differs from `lifetimes --csv` (%d bytes)", resp.StatusCode, len(got), len(want))
	}
	if n := strings.Count(want, "\n") - 1; fmt.Sprint(n) != totalBooked {
		t.Fatalf("CSV has %d rows, the page says %s", n, totalBooked)
	}
}

// browseHostileListing: a hostile course name is text, not markup; its listing's page shows its
// events with Kafka positions and its timeline.
func browseHostileListing(t *testing.T, ctx context.Context, base string, shot func(string)) {
	t.Helper()
	open(t, ctx, base+"/listings?"+url.Values{"course": {browserHostileCourse}}.Encode())
	shot("hostile")
	if cell, s := text(t, ctx, "#listings td.course a"), count(t, ctx, "script"); cell != browserHostileCourse || s != 0 {
		t.Fatalf("hostile course shows as %q with %d script elements", cell, s)
	}
	hostileLink := attr(t, ctx, "#listings td.course a", "href")

	open(t, ctx, base+hostileLink)
	shot("listing")
	evRows, points, table := count(t, ctx, "#event-table tbody tr"), count(t, ctx, "#timeline svg.chart .datum"), text(t, ctx, "#event-table")
	if evRows != 2 || points != 3 || count(t, ctx, "script") != 0 || !strings.Contains(table, "booking-events/") || !strings.Contains(table, "99,000원") {
		t.Fatalf("one listing: %d event rows (want 2), %d timeline points (want 2 events + 1 lifetime); table:\n%s", evRows, points, table)
	}
}

// browseTimeToBook: the overview's time to book is `lifetimes --summary` as of the same time: one
// panel per course with its n and listings still open, its curve, its 95% band (where the band is
// defined) and one thin curve per weekday without a band; every booked-only section says "among
// booked listings".
func browseTimeToBook(t *testing.T, ctx context.Context, base string, env map[string]string) {
	t.Helper()
	out, stderr, err := runCLI(t, t.Context(), env, "lifetimes", "--summary", "--json", "--as-of", "2026-04-21")
	if err != nil {
		t.Fatalf("lifetimes --summary --json: %v\n%s", err, stderr)
	}
	var sum struct {
		Groups []struct {
			Kind, Course string
			N            int
			AtRisk       int `json:"at_risk"`
			Points       []struct{ Lower *float64 }
		}
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatal(err)
	}
	type panel struct {
		Course, Caption                string
		Curves, Bands, Weekdays, Risks int
	}
	got := map[string]panel{}
	for _, p := range must(t, ctx, "panels", chromedp.Evaluate[[]panel](`[...document.querySelectorAll("#incidence figure.panel")].map(f => ({
		Course: f.querySelector("figcaption b").textContent, Caption: f.querySelector("figcaption").textContent,
		Curves: f.querySelectorAll("svg path.curve").length, Bands: f.querySelectorAll("svg path.band").length,
		Weekdays: f.querySelectorAll("svg path.weekday").length, Risks: f.querySelectorAll("table.risk td").length}))`)) {
		got[p.Course] = p
	}
	courses, weekdays := 0, map[string]int{}
	for _, g := range sum.Groups {
		if g.Kind == "course_weekday" {
			weekdays[g.Course]++
		}
	}
	for _, g := range sum.Groups {
		if g.Kind != "course" {
			continue
		}
		courses++
		band := 0
		for _, p := range g.Points {
			if p.Lower != nil {
				band = 1
			}
		}
		p, ok := got[g.Course]
		if want := fmt.Sprintf("%d listings, %d still open", g.N, g.AtRisk); !ok || !strings.Contains(p.Caption, want) ||
			p.Curves != 1 || p.Bands != band || p.Weekdays != weekdays[g.Course] || p.Risks != 8 {
			t.Errorf("panel of %q = %+v (found %v); want %q, 1 curve, %d band, %d weekday curves without bands, 8 cells under it",
				g.Course, p, ok, want, band, weekdays[g.Course])
		}
	}
	if courses < 3 || len(got) != courses {
		t.Errorf("%d panels for %d courses", len(got), courses)
	}
	for _, id := range []string{"heatmap", "spread", "lead", "price"} {
		if h := text(t, ctx, "#"+id+" h2"); !strings.Contains(h, "among booked listings") {
			t.Errorf("#%s is over booked listings only and says %q, without \"among booked listings\"", id, h)
		}
	}
}
