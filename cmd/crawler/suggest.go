package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/crawler/suggest"
)

const suggestHelp = `Write a site entry of the sites file from one request copied out of the browser: open the
page that lists tee times, open the developer tools' Network tab, find the request whose answer
holds them (a document or an XHR), right-click it and choose "Copy as cURL" (bash), then
  crawler suggest --curl - --date 2026-12-05 --target 'id=137,name=파인힐스 CC' < request.txt > site.yaml
or give the page's URL instead of --curl. The request is sent as a crawl sends it (robots.txt
obeyed, the crawler's politeness and decoding), with the copied cookies, and once without them.
Nothing is guessed by a model: the rows are the JSON array or the repeated HTML element whose
cells look like tee times (06:30, 0630, 06:30:00, 6:30) beside prices and player counts; the
fields are chosen by value shape and by name; the play date's spellings in the URL and body
become templates over {{.Date}} (full-year ones only without --date), a given target's id becomes
{{.Target.id}}, and one more request for a date ` + "180" + ` days ahead shows what an empty answer
looks like (json.success, empty_when). Every decision is printed on stderr with its evidence; the
sites file goes to stdout. Cookie, Authorization, and session ids, tokens, CSRF tokens and passwords in
headers, the query, path parameters, the form or the JSON body never reach it nor stderr (each is named
in the "dropped" line; a password becomes a login block over credential variables); -u is sent as
Basic, never written. Up to 3 more requests ask for the last date of --days-ahead (warning when it
reaches past the last date with rows) and learn a sold-out marker row (empty_when).

When two columns read the page alike with other values (a green fee beside a cart fee) and no
documented rule tells them apart, only the page decides: --example gives what it shows for one
tee time, as a row of text ('12/06 06:30 샤인코스 160,000원 4명', split by the crawler's own
readers) or cell=value (price=160,000, course_part=샤인; together one row), repeatable. The entry
must read every example; an example no column reads is an error naming the closest. stderr ends
with the first listings as the crawler reads them: compare them with the page.

Exit status 0 when the entry is decided: every field bound by a winner no column rivals, by a
documented rule, or by an example; 2 when it is not (a field undecided: stderr shows the
candidates side by side and the command to run again with an example), partial (fields missing)
or a login page (the login block names the variables to set); 1 on errors.`

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ", ") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// suggestCmd is `crawler suggest`.
func suggestCmd(ctx context.Context, env cli.Env, args []string) error {
	fs := env.NewFlagSet("suggest", suggestHelp, logEnvHelp)
	curlFile := fs.String("curl", "", "`file` holding the browser's \"Copy as cURL\" text; '-' reads stdin (else give the URL)")
	date := fs.String("date", "", "the play `date` YYYY-MM-DD the request asked for (default: a full-year date found in it)")
	var targets, examples stringList
	fs.Var(&targets, "target", "a `target` to crawl, as 'id=137,name=파인힐스 CC'; repeat for every club")
	fs.Var(&examples, "example", "what the page shows for one tee time: a `row` of text ('06:30 샤인코스 160,000원 4명') or cell=value (price=160,000); it binds the fields; repeatable")
	name := fs.String("name", "", "the site's `name`, the events' source (default: from the host)")
	days := fs.Int("days-ahead", 14, "how many `days` after the crawl's date to crawl")
	probe := fs.Bool("probe-empty", true, "ask for a far-ahead date too, to learn what an empty answer looks like")
	check := fs.Bool("check", false, "run `crawler try` on the suggestion and print the listings it reads (stderr)")
	arg, err := cli.ParseOne(fs, args, "URL")
	if err != nil {
		return err
	}
	req, err := suggestRequest(env, *curlFile, arg)
	if err != nil {
		return err
	}
	// The fetches are crawls of one page each: their progress is the reasoning on stderr, their
	// log only what went wrong.
	quiet, err := cli.NewLoggerDefault(env.Getenv, env.Stderr, slog.LevelWarn, "text")
	if err != nil {
		return err
	}
	o := suggest.Options{Request: req, Examples: examples, Name: *name, DaysAhead: *days, ProbeEmpty: *probe,
		Command: suggest.ShellCommand(append([]string{"crawler", "suggest"}, args...)...),
		Fetcher: suggest.Fetcher{Logger: quiet, Getenv: env.Getenv},
		Say:     func(format string, a ...any) { fmt.Fprintf(env.Stderr, format+"\n", a...) }}
	if *date != "" {
		if o.Date, err = time.ParseInLocation("2006-01-02", *date, site.Seoul()); err != nil {
			return fmt.Errorf("%w: --date must be YYYY-MM-DD: %v", cli.ErrUsage, err)
		}
	}
	for _, t := range targets {
		tg, err := parseTarget(t)
		if err != nil {
			return err
		}
		o.Targets = append(o.Targets, tg)
	}
	sg, err := suggest.Suggest(ctx, o)
	if len(sg.YAML) > 0 {
		if _, werr := env.Stdout.Write(sg.YAML); werr != nil {
			return werr
		}
	}
	if err != nil {
		return err
	}
	if *check && sg.Site == nil {
		fmt.Fprintf(env.Stderr, "check: skipped: the entry is partial (it lacks %s), so there is nothing to try yet\n", strings.Join(sg.Missing, ", "))
	}
	if *check && sg.Site != nil {
		// The table shows every rejected row and failed page; the log would say them twice.
		errorsOnly, err := cli.NewLoggerDefault(env.Getenv, env.Stderr, slog.LevelError, "text")
		if err != nil {
			return err
		}
		if err := suggestCheck(ctx, env, errorsOnly, sg); err != nil {
			return err
		}
	}
	switch {
	case len(sg.Missing) > 0:
		return fmt.Errorf("%w: the entry lacks %s (see above)", cli.ErrPartial, strings.Join(sg.Missing, ", "))
	case sg.Login:
		return fmt.Errorf("%w: the site needs a login: set the login block's credential variables", cli.ErrPartial)
	case sg.Session:
		return fmt.Errorf("%w: the page answers only within the browser's session, and suggest found no page to capture it from (see above)", cli.ErrPartial)
	case len(sg.Env) > 0:
		return fmt.Errorf("%w: the page needs the golfer's own values: set %s (the entry's env block)", cli.ErrPartial, strings.Join(sg.Env, " and "))
	case len(sg.Undecided) > 0:
		return fmt.Errorf("%w: %s undecided: run again with --example (see above)", cli.ErrPartial, strings.Join(sg.Undecided, ", "))
	}
	return nil
}

// suggestRequest is the request of --curl FILE, or a GET of the URL argument.
func suggestRequest(env cli.Env, file, rawURL string) (suggest.Request, error) {
	switch {
	case file != "" && rawURL != "":
		return suggest.Request{}, fmt.Errorf("%w: give --curl or a URL, not both", cli.ErrUsage)
	case file == "" && rawURL == "":
		return suggest.Request{}, fmt.Errorf("%w: give --curl FILE (\"Copy as cURL\" text, '-' for stdin) or the page's URL", cli.ErrUsage)
	case rawURL != "":
		return suggest.ParseCurl("curl '" + strings.ReplaceAll(rawURL, "'", `'\''`) + "'")
	}
	var (
		b   []byte
		err error
	)
	if file == "-" {
		b, err = io.ReadAll(os.Stdin)
	} else {
		b, err = os.ReadFile(file)
	}
	if err != nil {
		return suggest.Request{}, fmt.Errorf("read --curl: %w", err)
	}
	r, err := suggest.ParseCurl(string(b))
	if errors.Is(err, suggest.ErrCurl) {
		return r, fmt.Errorf("%w: --curl %s: %v", cli.ErrUsage, file, err)
	}
	return r, err
}

// parseTarget reads 'id=137,name=파인힐스 CC'; a part without = belongs to the value before it.
func parseTarget(s string) (site.Target, error) {
	t := site.Target{}
	last := ""
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(part, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " ") {
			if last == "" {
				return nil, fmt.Errorf("%w: --target %q: want key=value pairs such as id=137,name=파인힐스 CC", cli.ErrUsage, s)
			}
			t[last] += "," + part
			continue
		}
		t[k], last = strings.TrimSpace(v), k
	}
	return t, nil
}

// suggestCheck is `crawler try` on the suggestion: its play date and target, the listings read
// printed on stderr (stdout holds the sites file).
func suggestCheck(ctx context.Context, env cli.Env, logger *slog.Logger, sg suggest.Suggestion) error {
	want := ""
	if sg.Target != nil {
		want = sg.Target["id"]
	}
	st, err := trySite(sg.Site, want)
	if err != nil {
		return err
	}
	at := sg.Date
	if at.IsZero() {
		at = time.Now().In(site.Seoul())
	}
	at = at.Add(12 * time.Hour)
	var (
		mu      sync.Mutex
		reports []crawler.PageReport
	)
	res, err := crawler.Collect(ctx, st, at, crawler.CollectDeps{
		Logger: logger, Getenv: env.Getenv,
		OnPage: func(p crawler.PageReport) { mu.Lock(); reports = append(reports, p); mu.Unlock() },
	})
	sort.SliceStable(reports, func(i, j int) bool { return reports[i].Request < reports[j].Request })
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\ncheck: crawler try --site %s --date %s on the suggestion:\n", st.Name, at.Format("2006-01-02"))
	writeTry(&b, reports, false)
	fmt.Fprintf(&b, "check: %d page(s), %d listing(s), %d row(s) rejected, %d page(s) failed\n",
		res.Pages, len(res.Listings), res.Rejected, len(res.FailedPages))
	if _, err := fmt.Fprint(env.Stderr, crawler.Redact(b.String(), st.Secrets(env.Getenv))); err != nil {
		return err
	}
	if n := len(res.FailedPages); n > 0 {
		if sg.Login && len(st.Secrets(env.Getenv)) == 0 {
			fmt.Fprintln(env.Stderr, "check: the login's variables are not set here, so the login failed")
			return nil
		}
		if len(sg.Env) > 0 {
			fmt.Fprintf(env.Stderr, "check: %s not set here, so no page was fetched\n", strings.Join(sg.Env, " and "))
			return nil
		}
		return fmt.Errorf("check: %d page(s) of the suggestion failed", n)
	}
	return nil
}
