package suggest

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/events"
)

// topCandidates is how many candidate columns of a cell are read through the crawler's parser
// (the best by shape and name): each read is one parse of the fetched page, so the analysis
// stays linear in the page whatever the number of columns.
const topCandidates = 3

// readScore is what the crawler's parser reads from the fetched page with one mapping: its
// listings (rows that share a listing key collapse into one), its rejected rows, and how many
// listings know the cell being decided (a price, a player count).
type readScore struct {
	listings, rejected, known int
	cell                      string // the cell decided
	err                       error
}

func (s readScore) String() string {
	if s.err != nil {
		return "not read (" + s.err.Error() + ")"
	}
	out := fmt.Sprintf("%d listing(s), %d rejected", s.listings, s.rejected)
	if c, ok := cells[s.cell]; ok && !c.Identity {
		out += fmt.Sprintf(", %d with a known %s", s.known, s.cell)
	}
	return out
}

// better reports whether s reads more than o: more listings, then fewer rejects, then more
// listings that know the cell. A mapping that reads nothing is never better.
func (s readScore) better(o readScore) bool {
	switch {
	case (s.err == nil) != (o.err == nil):
		return s.err == nil
	case s.listings != o.listings:
		return s.listings > o.listings
	case s.rejected != o.rejected:
		return s.rejected < o.rejected
	}
	return s.known > o.known
}

// reader reads the fetched page through the crawler's parser with fields (what assignFields has
// chosen so far), telling how well cell is known. nil: no page to read (the candidates are then
// ranked by shape and name alone).
type reader func(fields map[string]pick, cell string) readScore

// candidate is one column that fits a cell, with its shape fit and name hint.
type candidate struct {
	i    int // the column's index
	f    fit
	hint int
}

// rankedCandidates are the columns not used yet that fit cell field, best first by shape (a more
// telling shape, then more values with it), then name hint, then column order; byHint puts the
// name hint first (price, players: a bare number is as good a price as a marked one).
// A column of the rows' positions (1, 2, 3, …: a row number) is no candidate, unless its name
// says the cell; skipped names each one left out.
func rankedCandidates(cols []column, used map[int]bool, field string, byHint bool, crawledAt time.Time) (out []candidate, skipped []string) {
	for i, c := range cols {
		if used[i] {
			continue
		}
		f := c.fits(cells[field], crawledAt)
		switch {
		case !f.ok:
		case rowNumbers(c.values) && hint(field, c.name) == 0:
			skipped = append(skipped, c.label())
		default:
			out = append(out, candidate{i: i, f: f, hint: hint(field, c.name)})
		}
	}
	byShape := func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.f.rank, b.f.rank), cmp.Compare(b.f.n, a.f.n))
	}
	slices.SortStableFunc(out, func(a, b candidate) int {
		if byHint {
			return cmp.Or(cmp.Compare(b.hint, a.hint), byShape(a, b))
		}
		return cmp.Or(byShape(a, b), cmp.Compare(b.hint, a.hint))
	})
	return out, skipped
}

// rowNumbers reports whether values are the rows' positions: at least three, each one more than
// the one before (1, 2, 3, …; a later page may start at 11), or back to 1 where a group of rows
// starts again (1, 2, 3, 1, 2, 3: the position within a course), empty ones skipped.
func rowNumbers(values []string) bool {
	prev, n, run := 0, 0, 0
	for _, v := range values {
		v = strings.TrimSpace(site.CleanText(v))
		if v == "" {
			continue
		}
		k, err := strconv.Atoi(v)
		switch {
		case err != nil:
			return false
		case n == 0 || k == prev+1:
			run++
		case k == 1 && run >= 2:
			run = 1
		default:
			return false
		}
		prev, n = k, n+1
	}
	return n >= 3
}

// decision is how a cell's column was decided: the winner and the runner-up (nil: none), what
// each read, and for a price the list prices and amounts off the winner was preferred to.
type decision struct {
	win, runner *candidate
	winRead     readScore
	runnerRead  readScore
	read        bool     // the candidates were read through the parser
	list        []string // the list prices passed over, with why
	off         []string // the amounts off passed over, with why
	// rivals are the candidates (column indexes) that read the sampled rows as well as the winner
	// with other values, and that no rule settles; settled says each rival a rule did settle,
	// with the rule.
	rivals  []int
	settled []string
}

// decide picks the column of cell field among its ranked candidates: each of the first
// topCandidates is read through the crawler's parser with the fields chosen so far (coordinate
// ascent: the other cells held at their best), the one that reads the most wins; of two prices
// that read alike, the one a golfer pays (payRanks) wins; otherwise the ranking stands.
func decide(cols []column, cands []candidate, field string, fields map[string]pick, read reader) decision {
	var d decision
	if len(cands) == 0 {
		return d
	}
	top := cands[:min(len(cands), topCandidates)]
	scores := make([]readScore, len(top))
	if read != nil && len(top) > 1 {
		d.read = true
		for k, c := range top {
			try := maps.Clone(fields)
			try[field] = pickOf(cols[c.i])
			scores[k] = read(try, field)
		}
	}
	pay, why := make([]int, len(top)), make([]string, len(top))
	if field == "price" && len(top) > 1 {
		pay, why = payRanks(cols, top)
	}
	order := make([]int, len(top))
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case scores[a].better(scores[b]):
			return -1
		case scores[b].better(scores[a]):
			return 1
		}
		return cmp.Compare(pay[a], pay[b])
	})
	d.win, d.winRead = &top[order[0]], scores[order[0]]
	if len(order) > 1 {
		d.runner, d.runnerRead = &top[order[1]], scores[order[1]]
	}
	d.rivals, d.settled = rivals(cols, top, order, scores, pay, why, field)
	for _, k := range order[1:] {
		if why[k] == "" || scores[k].better(scores[order[0]]) || pay[k] <= pay[order[0]] {
			continue
		}
		passed := cols[top[k].i].label() + " (" + why[k] + ")"
		if pay[k] == payAmountOff {
			d.off = append(d.off, passed)
		} else {
			d.list = append(d.list, passed)
		}
	}
	return d
}

// reListPrice and reSalePrice are what a price column's name says when a page shows two: the
// list price (정가, 정상가, normal, list) or the price a golfer pays (할인가, 판매가, sale, dc).
var (
	reListPrice = regexp.MustCompile(`(?i)(정가|정상|기본|list|normal|orig|regular|basic|std|standard|rack)`)
	reSalePrice = regexp.MustCompile(`(?i)(할인|판매|실결제|결제|특가|sale|dc|disc|real|final|pay)`)
)

// The pay ranks of a price column among two or more (lower: more likely the price a golfer
// pays).
const (
	paySaleName  = iota // its name says sale (할인가, salePrice, dcFee)
	payPlain            // nothing tells
	payListName         // its name says list (정가, normal), or its cells are struck through (<del>)
	payListValue        // another column is lower in every row that shows both, and above half of it: the sale price beside this list price
	payAmountOff        // under half of another price in every row: an amount off (a discount), not a price
)

// payRanks ranks price candidates by which one a golfer pays, with the reason for each one that
// is not: by their values first (of two prices, the lower one, unless it is under half the other:
// then it is an amount off), then by the list markup and names.
func payRanks(cols []column, cands []candidate) ([]int, []string) {
	prices := make([][]*int64, len(cands))
	for k, c := range cands {
		prices[k] = make([]*int64, len(cols[c.i].values))
		for r, v := range cols[c.i].values {
			if p, err := site.ParsePrice(v); err == nil && p != nil && *p > 0 {
				prices[k][r] = p
			}
		}
	}
	rank := make([]int, len(cands))
	why := make([]string, len(cands))
	for k, c := range cands {
		col := cols[c.i]
		rank[k] = payPlain
		switch {
		case col.struck > 0:
			rank[k], why[k] = payListName, "list price: struck through"
		case reListPrice.MatchString(col.name) && !reSalePrice.MatchString(col.name):
			rank[k], why[k] = payListName, "list price: its name says so"
		case reSalePrice.MatchString(col.name) && !reListPrice.MatchString(col.name):
			rank[k] = paySaleName
		}
		for o := range cands {
			if o == k {
				continue
			}
			switch relate(prices[k], prices[o]) {
			case "amount off":
				rank[k], why[k] = payAmountOff, "an amount off, under half of "+cols[cands[o].i].label()+" in every row: not a price"
			case "above":
				if rank[k] < payListValue {
					rank[k], why[k] = payListValue, "list price: above "+cols[cands[o].i].label()+" in every row that shows both"
				}
			}
		}
	}
	return rank, why
}

// relate tells how price column a stands to b over the rows that show both: "above" (a ≥ b in
// every row, a > b in one, and b at least half of a: b is the sale price beside list price a),
// "amount off" (a under half of b in every row), or "".
func relate(a, b []*int64) string {
	both, above, strictly, off := 0, 0, 0, 0
	for r := range a {
		if a[r] == nil || b[r] == nil {
			continue
		}
		both++
		x, y := *a[r], *b[r]
		if x >= y && 2*y >= x {
			above++
			if x > y {
				strictly++
			}
		}
		if 2*x < y {
			off++
		}
	}
	switch {
	case both == 0:
		return ""
	case off == both:
		return "amount off"
	case above == both && strictly > 0:
		return "above"
	}
	return ""
}

// sayDecision tells how the cell's column was decided: its shape evidence, what the crawler's
// parser read with it and with the runner-up, and for a price the list price it was preferred
// to.
func sayDecision(say func(string, ...any), cols []column, field string, d decision) {
	w := cols[d.win.i]
	msg := fmt.Sprintf("%s ← %s: %d of %d rows look like %s%s", field, w.label(), d.win.f.n, d.win.f.rows, d.win.f.shape.Name, hintNote(field, w.name))
	switch {
	case d.runner == nil:
		msg += "; no runner-up (no other column reads as " + field + ")"
	case d.read:
		msg += fmt.Sprintf("; with it the crawler's parser reads %s; runner-up %s: %s", d.winRead, cols[d.runner.i].label(), d.runnerRead)
	default:
		msg += fmt.Sprintf("; runner-up %s (not read: no page)", cols[d.runner.i].label())
	}
	say("%s", msg)
	if len(d.settled) > 0 {
		say("%s: decided by rule: %s over %s, which reads the rows as well", field, w.label(), strings.Join(d.settled, "; "))
	}
	if len(d.list) > 0 {
		say("price: %s is the price a golfer pays; not %s", w.label(), strings.Join(d.list, "; not "))
	}
	if len(d.off) > 0 {
		say("price: not %s; the crawl reads %s, the price before such a discount (low confidence: check what the site charges)", strings.Join(d.off, "; not "), w.label())
	}
}

// pageReader reads the fetched page through the crawler's own parser (crawler.Collect on a
// transport that answers with the page) with a mapping of the rows found: the required cells
// not chosen yet are read from the request (a constant course and the fetched date), so that
// only the cells chosen so far decide.
func (a *analysis) pageReader(ctx context.Context) reader {
	return func(fields map[string]pick, cell string) readScore {
		f := site.Fields{}
		for name, p := range fields {
			f[name] = a.fieldOf(p)
		}
		res, err := a.readPage(ctx, a.page.Body, f)
		if err != nil {
			return readScore{err: err}
		}
		s := readScore{listings: len(res.Listings), rejected: res.Rejected, cell: cell}
		show := cells[cell].Columns[0].Value
		for _, l := range res.Listings {
			if v := show(l); v != "" && v != "-" && v != "0" { // a price or count of 0 is none
				s.known++
			}
		}
		return s
	}
}

// readPage reads body through the crawler's parser with the rows found and fields (readSite).
func (a *analysis) readPage(ctx context.Context, body []byte, fields site.Fields) (crawler.Result, error) {
	st, err := a.readSite(fields)
	if err != nil {
		return crawler.Result{}, err
	}
	return crawler.Collect(ctx, st, a.date.Add(12*time.Hour), crawler.CollectDeps{
		Logger: slog.New(slog.DiscardHandler), Transport: pageTransport(body)})
}

// readSite is a site that reads one page (any URL) with the rows found and fields; the required
// cells not in fields, and those from the request, are read as constants (readableFields).
func (a *analysis) readSite(fields site.Fields) (*site.Site, error) {
	spec := site.SiteSpec{Name: "suggest-read", Format: a.out.Format, Row: a.out.Row, List: a.out.List, Grid: a.out.Grid,
		Requests: []site.RequestTemplate{{URL: "http://suggest.invalid/page"}}, Fields: site.Fields{}}
	if a.out.JSON != nil {
		spec.JSON = &site.JSONPage{Rows: a.out.JSON.Rows}
	}
	spec.Politeness.NoDelay, spec.Politeness.NoRetry, spec.Politeness.IgnoreRobotsTxt = true, true, true
	a.readableFields(&spec, fields)
	return spec.Compile()
}

// readableFields sets spec's fields to fields, a value from the request ({{.Target.name}}) and a
// required cell not in fields read as a constant (the fetched date for round_date).
func (a *analysis) readableFields(spec *site.SiteSpec, fields site.Fields) {
	for name, f := range fields {
		if f.Value == "" {
			spec.Fields[name] = f
		}
	}
	for _, c := range site.Cells() {
		if _, ok := spec.Fields[c.Name]; ok || !c.Required && fields[c.Name].Value == "" {
			continue
		}
		v := "suggest"
		if c.Name == "round_date" {
			v = a.date.Format("2006-01-02")
		}
		spec.Fields[c.Name] = site.Field{Value: v}
	}
}

// rowListings are the listings the entry's fields read from body, one per row that makes one, in
// the page's order (rows that share a key each have theirs: the crawl's result keeps one).
func (a *analysis) rowListings(ctx context.Context, body []byte) ([]events.Listing, error) {
	st, err := a.readSite(a.out.Fields)
	if err != nil {
		return nil, err
	}
	var (
		mu  sync.Mutex
		out []events.Listing
	)
	_, err = crawler.Collect(ctx, st, a.date.Add(12*time.Hour), crawler.CollectDeps{
		Logger: slog.New(slog.DiscardHandler), Transport: pageTransport(body),
		OnPage: func(p crawler.PageReport) { mu.Lock(); out = append(out, p.Listings...); mu.Unlock() }})
	return out, err
}
