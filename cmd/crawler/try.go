package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/site"
)

const tryEnvHelp = `Environment:
  CRAWLER_SITES               sites file (--sites; default ` + site.DefaultSitesFile + `)
  the variables named in the site's login.credentials
` + logEnvHelp

// tryMaxPages bounds `crawler try`: it is for looking at the first pages, not for crawling.
const tryMaxPages = 20

// tryCmd is `crawler try`: crawl one site for one play date (and one target) and print what every
// page gave, without diffing, publishing or saving anything.
func tryCmd(ctx context.Context, env cli.Env, args []string) error {
	fs := env.NewFlagSet("try", "Fetch one site's pages for one play date (and one target) and print the listings read from\n"+
		"each page as a table, every rejected row with its reason and raw text and, with --dump, the\n"+
		"raw response, so that selectors and paths can be tried in minutes. Nothing is published or\n"+
		"saved. Politeness and the login apply as in a crawl; the credentials never appear in the\n"+
		"output. Exit status 1 when a page failed.",
		tryEnvHelp)
	sitesPath := fs.String("sites", cli.EnvOr(env.Getenv, "CRAWLER_SITES", site.DefaultSitesFile), "sites file `path` [CRAWLER_SITES]")
	name := fs.String("site", "", "`name` of the site to try (required)")
	date := fs.String("date", "", "play `date` YYYY-MM-DD (default: today in Asia/Seoul)")
	target := fs.String("target", "", "the `target` to try: one of its values (id, name, ...) or its 0-based index; default the first")
	dump := fs.Bool("dump", false, "print every page's raw response too")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *name == "" {
		return fmt.Errorf("%w: --site is required", cli.ErrUsage)
	}
	sites, err := site.LoadSites(*sitesPath)
	if err != nil {
		return err
	}
	var st *site.Site
	var names []string
	for _, s := range sites {
		names = append(names, s.Name)
		if s.Name == *name {
			st = s
		}
	}
	if st == nil {
		return fmt.Errorf("%w: no site %q in %s (sites: %s)", cli.ErrUsage, *name, *sitesPath, strings.Join(names, ", "))
	}
	at := time.Now().In(site.Seoul())
	if *date != "" {
		d, err := time.ParseInLocation("2006-01-02", *date, site.Seoul())
		if err != nil {
			return fmt.Errorf("%w: --date must be YYYY-MM-DD: %v", cli.ErrUsage, err)
		}
		at = d.Add(12 * time.Hour)
	}
	if st, err = trySite(st, *target); err != nil {
		return err
	}

	var (
		mu      sync.Mutex
		reports []crawler.PageReport
	)
	res, err := crawler.Collect(ctx, st, at, crawler.CollectDeps{
		Logger: env.Logger, Getenv: env.Getenv,
		OnPage: func(p crawler.PageReport) { mu.Lock(); reports = append(reports, p); mu.Unlock() },
	})
	if err != nil && len(reports) == 0 {
		return err
	}
	sort.SliceStable(reports, func(i, j int) bool { return reports[i].Request < reports[j].Request })
	var b strings.Builder
	writeTry(&b, reports, *dump)
	fmt.Fprintf(&b, "\n%s on %s: %d page(s), %d listing(s), %d row(s) rejected, %d page(s) failed",
		st.Name, at.Format("2006-01-02"), res.Pages, len(res.Listings), res.Rejected, len(res.FailedPages))
	if res.MaxPagesHit {
		fmt.Fprintf(&b, ", stopped at %d pages", tryMaxPages)
	}
	b.WriteString("\n")
	if _, werr := fmt.Fprint(env.Stdout, crawler.Redact(b.String(), st.Secrets(env.Getenv))); werr != nil {
		return werr
	}
	if err != nil {
		return err
	}
	if n := len(res.FailedPages); n > 0 {
		return fmt.Errorf("%d of %d page(s) failed", n, n+res.Pages)
	}
	return nil
}

// pickTarget keeps the one target of site that --target names (default: the first).
// trySite is site as try crawls it: one play date, one target (pickTarget), at most tryMaxPages
// pages.
func trySite(st *site.Site, target string) (*site.Site, error) {
	spec := st.SiteSpec
	if err := pickTarget(&spec, target); err != nil {
		return nil, err
	}
	spec.DaysAhead = 0
	spec.Politeness.MaxPages = min(spec.Politeness.MaxPages, tryMaxPages)
	return spec.Compile()
}

func pickTarget(st *site.SiteSpec, want string) error {
	if len(st.Targets) == 0 {
		if want != "" {
			return fmt.Errorf("%w: site %s declares no targets", cli.ErrUsage, st.Name)
		}
		return nil
	}
	if want == "" {
		st.Targets = st.Targets[:1]
		return nil
	}
	var labels []string
	for i, t := range st.Targets {
		match := strconv.Itoa(i) == want
		var kv []string
		for k, v := range t {
			match = match || v == want
			kv = append(kv, k+"="+v)
		}
		if match {
			st.Targets = []site.Target{t}
			return nil
		}
		sort.Strings(kv)
		labels = append(labels, fmt.Sprintf("%d {%s}", i, strings.Join(kv, ", ")))
	}
	return fmt.Errorf("%w: no target of site %s matches %q; targets: %s", cli.ErrUsage, st.Name, want, strings.Join(labels, "; "))
}

func writeTry(b *strings.Builder, reports []crawler.PageReport, dump bool) {
	for _, p := range reports {
		fmt.Fprintf(b, "== %s\n", p.Request)
		switch {
		case p.Err != nil:
			fmt.Fprintf(b, "   FAILED (status %d): %v\n", p.Status, p.Err)
		case p.NotOpen:
			fmt.Fprintf(b, "   status %d: the date is not open for booking yet (not_open holds): it opens and closes nothing\n", p.Status)
		case p.Empty:
			fmt.Fprintf(b, "   status %d: a sold-out answer (empty_when holds, or the list is shown without rows): no tee times\n", p.Status)
		case len(p.Captured) > 0:
			fmt.Fprintf(b, "   status %d: captured %s for the requests after it (a secret: never shown)\n", p.Status, strings.Join(p.Captured, ", "))
		default:
			fmt.Fprintf(b, "   status %d: %d listing(s), %d rejected row(s)", p.Status, len(p.Listings), len(p.Rejected))
			if p.OtherDate > 0 {
				fmt.Fprintf(b, ", %d row(s) of other dates dropped", p.OtherDate)
			}
			b.WriteString("\n")
		}
		if len(p.Listings) > 0 {
			var cols []site.ShownColumn
			for _, c := range site.Cells() {
				cols = append(cols, c.Columns...)
			}
			from := fallbackCells(p.Sources) // which source gave the cells with fallbacks
			var t cli.Table
			header := make([]string, 0, len(cols)+len(from))
			for _, c := range cols {
				header = append(header, c.Header)
			}
			for _, name := range from {
				header = append(header, name+" from")
			}
			t.Add(header...)
			for i, l := range p.Listings {
				row := make([]string, 0, len(header)) // the table keeps it
				for _, c := range cols {
					row = append(row, c.Value(l))
				}
				for _, name := range from {
					src := ""
					if i < len(p.Sources) {
						src = p.Sources[i][name]
					}
					row = append(row, src)
				}
				t.Add(row...)
			}
			var tb strings.Builder
			_ = t.Write(&tb) // a strings.Builder does not fail
			for _, line := range strings.Split(strings.TrimRight(tb.String(), "\n"), "\n") {
				b.WriteString("   " + line + "\n")
			}
		}
		for _, r := range p.Rejected {
			fmt.Fprintf(b, "   rejected (%s): %v\n      raw: %s\n", r.Reason, r.Err, r.Raw)
		}
		if dump && p.Body != nil {
			fmt.Fprintf(b, "   --- raw response (%d bytes) ---\n%s\n   --- end ---\n", len(p.Body), strings.TrimRight(string(p.Body), "\n"))
		}
		if dump && len(p.Grid) > 0 {
			fmt.Fprintf(b, "   --- the rows as the grid shows them (grid: true; ↑ a cell of a row above, ← a cell's further column) ---\n")
			for _, line := range p.Grid {
				b.WriteString("   " + line + "\n")
			}
			b.WriteString("   --- end ---\n")
		}
	}
}

// fallbackCells are the cells some listing's Sources name, in the cell table's order.
func fallbackCells(sources []map[string]string) []string {
	var out []string
	for _, c := range site.Cells() {
		for _, m := range sources {
			if _, ok := m[c.Name]; ok {
				out = append(out, c.Name)
				break
			}
		}
	}
	return out
}

// checkCmd is `crawler check`: validate every site of the sites file, and the watches file,
// without fetching.
func checkCmd(_ context.Context, env cli.Env, args []string) error {
	fs := env.NewFlagSet("check", "Validate every site of the sites file without fetching anything: selectors compile, JSON\n"+
		"paths parse, request and field templates execute for a sample date and every target, and\n"+
		"course, round_date and tee_time are mapped. Login credential variables that are not set\n"+
		"here are reported as warnings, and so are an HTML site whose list selector cannot be derived\n"+
		"from its row selector (set list:) and a JSON site with an is condition but no success.\n"+
		"With --watches, validate the watches file too (every error with its line number); with\n"+
		"--watches alone, the sites file is checked only when --sites or CRAWLER_SITES names one.\n"+
		"Each valid site's next five crawl times under `crawler run` are printed (its schedule: or the\n"+
		"global --schedule, active_hours, jitter and bursts), from now or --from.\n"+
		"Exit status 1 when a site or the watches file is invalid.",
		tryEnvHelp+alertsEnvHelp)
	sitesPath := fs.String("sites", cli.EnvOr(env.Getenv, "CRAWLER_SITES", site.DefaultSitesFile), "sites file `path` [CRAWLER_SITES]")
	global := fs.String("schedule", cli.EnvOr(env.Getenv, "CRAWL_SCHEDULE", crawler.DefaultSchedule), "the global cron `spec` of crawler run (Asia/Seoul), for the sites without a schedule: [CRAWL_SCHEDULE]")
	fromFlag := fs.String("from", "", "print the next crawl times after this `time` (RFC 3339, e.g. 2026-03-09T08:59:00+09:00); empty: now")
	watchesPath := fs.String("watches", env.Getenv("WATCHES_FILE"), "watches `file` to validate (the alerts' channels and watches) [WATCHES_FILE]")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	from := time.Now()
	if *fromFlag != "" {
		var err error
		if from, err = time.Parse(time.RFC3339, *fromFlag); err != nil {
			return fmt.Errorf("%w: --from: %v", cli.ErrUsage, err)
		}
	}
	if _, err := site.ScheduleInterval(*global, site.Seoul(), from); err != nil {
		return fmt.Errorf("%w: --schedule: %v", cli.ErrUsage, err)
	}
	sitesGiven := env.Getenv("CRAWLER_SITES") != ""
	fs.Visit(func(f *flag.Flag) { sitesGiven = sitesGiven || f.Name == "sites" })
	var b strings.Builder
	var errs []error
	ct := crawlTimes{global: *global, from: from}
	var wb strings.Builder
	if *watchesPath != "" {
		cfg, err := checkWatches(&wb, *watchesPath, env.Getenv)
		if err != nil {
			errs = append(errs, err)
		}
		if cfg != nil {
			ct.demand = watchDemand{func() *notify.Config { return cfg }}
		}
	}
	if *watchesPath == "" || sitesGiven {
		if err := checkSites(&b, *sitesPath, env.Getenv, ct); err != nil {
			errs = append(errs, err)
		}
	}
	b.WriteString(wb.String())
	if _, err := fmt.Fprint(env.Stdout, b.String()); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// crawlTimes is what `crawler check` needs to say when each site is crawled next: the global
// schedule, the time to count from and, with --watches, the watched page sets.
type crawlTimes struct {
	global string
	from   time.Time
	demand crawler.Demand // nil: no --watches
}

// demandShown is how many watched page sets `crawler check` names per site.
const demandShown = 8

// checkTimesShown is how many of a site's next crawl times `crawler check` prints.
const checkTimesShown = 5

// checkSites writes the check of every site of the sites file at path to b, with each valid
// site's next crawl times.
func checkSites(b *strings.Builder, path string, getenv func(string) string, ct crawlTimes) error {
	checks, err := site.CheckSites(path, getenv)
	if err != nil {
		return err
	}
	bad := 0
	for _, c := range checks {
		var times *site.SiteTimes
		if c.Err == nil {
			times, c.Err = c.Site.Times(ct.global)
		}
		if c.Err != nil {
			bad++
			fmt.Fprintf(b, "FAIL  %v\n", c.Err)
			continue
		}
		fmt.Fprintf(b, "ok    %s: %s\n", c.Site.Name, c.Site.Describe())
		for _, w := range c.Warnings {
			fmt.Fprintf(b, "      warning: %s\n", w)
		}
		if len(c.MissingEnv) > 0 {
			fmt.Fprintf(b, "      warning: the variables of its login or env block are not set here: %s\n", strings.Join(c.MissingEnv, ", "))
		}
		var next []string
		for _, at := range times.Upcoming(ct.from, checkTimesShown) {
			next = append(next, at.In(site.Seoul()).Format("2006-01-02 15:04:05"))
		}
		fmt.Fprintf(b, "      next crawls (Asia/Seoul; %s): %s\n", times.Describe(c.Site.Schedule != ""), strings.Join(next, ", "))
		if ct.demand != nil {
			writeDemand(b, crawler.ReportDemand(c.Site, times, ct.demand, ct.from), times)
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d site(s) in %s are invalid", bad, len(checks), path)
	}
	return nil
}

// writeDemand writes a site's demand under the watches (crawler check --watches).
func writeDemand(b *strings.Builder, r crawler.DemandReport, times *site.SiteTimes) {
	if r.Sets == 0 {
		b.WriteString("      demand: none (its pages are not page sets of a date or a club: watched_every does not apply)\n")
		return
	}
	var names []string
	for i, p := range r.Watched {
		if i == demandShown {
			names = append(names, fmt.Sprintf("and %d more", len(r.Watched)-demandShown))
			break
		}
		names = append(names, strings.TrimSpace(p.PlayDate+" "+p.Course))
	}
	fmt.Fprintf(b, "      demand: %d of %d page set(s) watched (every %s, confirm_after %s)", len(r.Watched), r.Sets,
		times.WatchedEvery(), times.ConfirmAfter())
	if len(names) > 0 {
		fmt.Fprintf(b, ": %s", strings.Join(names, ", "))
	}
	fmt.Fprintf(b, "\n      requests an hour: %.0f scheduled, %.0f watched (watched_budget %g: at most %.0f), plus one confirm crawl per opening seen\n",
		r.ScheduledPerHour, r.WatchedPerHour, times.WatchedBudget(), r.BudgetPerHour)
}

// checkWatches writes the check of the watches file at path to b: one line per error, each
// naming its line. The channels' secrets (url_env, token_env) are read but never printed. The
// config is nil when the file is invalid.
func checkWatches(b *strings.Builder, path string, getenv func(string) string) (*notify.Config, error) {
	cfg, err := notify.LoadFile(path, getenv)
	if err != nil {
		var joined interface{ Unwrap() []error }
		n := 1
		if errors.As(err, &joined) {
			n = len(joined.Unwrap())
		}
		msg := strings.TrimPrefix(err.Error(), "watches "+path+": ")
		for _, line := range strings.Split(msg, "\n") {
			fmt.Fprintf(b, "FAIL  %s: %s\n", path, strings.TrimPrefix(line, "watches: "))
		}
		return nil, fmt.Errorf("the watches file %s is invalid (%d error(s))", path, n)
	}
	muted := 0
	for _, w := range cfg.Watches {
		if w.Muted {
			muted++
		}
	}
	fmt.Fprintf(b, "ok    watches %s: %d watch(es) (%d muted), %d channel(s) in use: %s\n", path, len(cfg.Watches), muted,
		len(cfg.UsedChannels()), strings.Join(cfg.UsedChannels(), ", "))
	fmt.Fprintf(b, "      commands from the chat: %s\n", commandsSummary(cfg))
	if n := len(cfg.Watches) - demanding(cfg); n > 0 {
		fmt.Fprintf(b, "      %d watch(es) name neither a source nor a date or weekday (or are muted): they add no demand\n", n)
	}
	return cfg, nil
}

// demanding counts the watches that add demand (notify.Watch.AddsDemand).
func demanding(cfg *notify.Config) int {
	n := 0
	for _, w := range cfg.Watches {
		if w.AddsDemand() {
			n++
		}
	}
	return n
}

// commandsSummary says which channels take /watch and the other commands from their chat, and
// from whom (no secret: a chat id and user ids).
func commandsSummary(cfg *notify.Config) string {
	var out []string
	for _, name := range cfg.UsedChannels() {
		ch := cfg.Channels[name]
		if !ch.Commands {
			continue
		}
		who := "chat_id " + ch.ChatID
		if len(ch.AllowFrom) > 0 {
			ids := make([]string, len(ch.AllowFrom))
			for i, id := range ch.AllowFrom {
				ids[i] = strconv.FormatInt(id, 10)
			}
			who += "; in a group only from allow_from " + strings.Join(ids, ", ")
		} else {
			who += "; in a group from nobody (no allow_from)"
		}
		out = append(out, name+" ("+who+")")
	}
	if len(out) == 0 {
		return "none (no channel has commands: true)"
	}
	return strings.Join(out, "; ") + ": one process polls each bot (crawler run, or booking-consumer notify)"
}
