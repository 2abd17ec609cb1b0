package suggest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// A contest is a cell whose best candidate has a rival: a column that reads the sampled rows as
// well (as many listings, as few rejected rows, as many known values) with other values, which
// no documented rule tells apart (a list price above the paid one in every row that shows both,
// a struck-through or list-named column, a sale name, a name that says the cell beside one that
// does not) and no example of the golfer's decided. Such an entry is not decided: suggest exits
// 2 and shows the candidates side by side for one row, with the command to run again with an
// example.
type contest struct {
	cell string
	cols []int // the winner first, then its rivals (indexes into assignment.cols)
	// none: the cell may be none of them (a count alike in every row, under a name that does not
	// say the cell); cols are the lookalikes, the entry leaves the cell out.
	none bool
}

// rivals are the candidates of top (in order, the winner first) that read the rows as well as
// the winner with other values and that no rule settles; settled names those a rule settles,
// with the rule. Without a read (no page) there is no rival: the ranking stands, as before.
func rivals(cols []column, top []candidate, order []int, scores []readScore, pay []int, why []string, field string) (out []int, settled []string) {
	win := order[0]
	if scores[win].err != nil {
		return nil, nil
	}
	w := cols[top[win].i]
	for _, k := range order[1:] {
		r := cols[top[k].i]
		if scores[k].err != nil || scores[win].better(scores[k]) || sameReading(field, w, r) {
			continue
		}
		if rule := settles(field, w, r, pay[win], pay[k], why[k]); rule != "" {
			settled = append(settled, r.label()+" ("+rule+")")
			continue
		}
		out = append(out, top[k].i)
	}
	return out, settled
}

// settles is the rule by which the winner w (pay rank pw) is preferred to the rival r (pay rank
// pr, why the reason r is not the price a golfer pays), "" when none does.
func settles(field string, w, r column, pw, pr int, why string) string {
	switch {
	case field == "price" && pr > pw && why != "":
		return why
	case field == "price" && pw == paySaleName && pr == payPlain:
		return "its name does not say sale, " + w.label() + "'s does"
	case hint(field, w.name) > 0 && hint(field, r.name) == 0:
		return "its name does not say " + field + ", " + w.label() + "'s does"
	}
	return ""
}

// sameReading reports whether two columns read alike as cell in every row (the crawl's
// normaliser's reading: 0630 and 06:30, 150000 and 150,000원).
func sameReading(cell string, a, b column) bool {
	for r := range a.values {
		if reading(cell, a.values[r]) != reading(cell, b.values[r]) {
			return false
		}
	}
	return true
}

// reading is what the crawl reads a raw value as for cell: the normalised value, or the text.
func reading(cell, raw string) string {
	switch cell {
	case "tee_time":
		if v, err := site.ParseTeeTime(raw); err == nil {
			return v
		}
	case "price":
		if p, err := site.ParsePrice(raw); err == nil {
			if p == nil || *p == 0 {
				return ""
			}
			return fmt.Sprint(*p)
		}
	case "players":
		if p, err := site.ParsePlayers(raw); err == nil {
			if p == nil {
				return ""
			}
			return fmt.Sprint(*p)
		}
	}
	return site.CleanText(raw)
}

// contestRow is the row where the contests are shown side by side: the first where the first
// contest's candidates read differently.
func contestRow(cols []column, cs []contest) int {
	c := cs[0]
	if c.none {
		return 0
	}
	for r := range cols[c.cols[0]].values {
		first := reading(c.cell, cols[c.cols[0]].values[r])
		for _, o := range c.cols[1:] {
			if reading(c.cell, cols[o].values[r]) != first {
				return r
			}
		}
	}
	return 0
}

// sayContests shows the contests for one row, each cell's candidates side by side with the
// values they read there (price: GREEN_FEE 160,000 | CART_FEE 100,000), and the command to run
// again with an example: the row's tee time and part as the page shows them, and the winners'
// values, to be replaced by what the page shows.
func (a *analysis) sayContests(as assignment) {
	if len(as.contests) == 0 {
		return
	}
	cols := as.cols
	r := contestRow(cols, as.contests)
	var cellsSaid []string
	for _, c := range as.contests {
		cellsSaid = append(cellsSaid, c.cell)
	}
	a.say("undecided: %s: columns read the %d sampled rows alike, and no rule tells which one the page shows (or whether it shows one); only the page decides",
		strings.Join(cellsSaid, ", "), len(cols[0].values))
	rowText := a.rowText(as, r)
	a.say("undecided: in the row of %s they read:", rowText)
	var ex []string
	for _, cell := range []string{"round_date", "tee_time", "course", "course_part"} {
		if p, ok := as.fields[cell]; ok && p.value == "" {
			if i := slices.IndexFunc(cols, func(c column) bool { return c.where == p.where }); i >= 0 && !slices.ContainsFunc(as.contests, func(c contest) bool { return c.cell == cell }) {
				if v := site.CleanText(cols[i].values[r]); v != "" {
					ex = append(ex, v)
				}
			}
		}
	}
	for _, c := range as.contests {
		var side []string
		for _, i := range c.cols {
			side = append(side, cols[i].label()+" "+orNone(site.CleanText(cols[i].values[r])))
		}
		if c.none {
			side = append(side, "none (the page shows no "+c.cell+": leave it out of the example)")
		}
		a.say("  %s: %s", c.cell, strings.Join(side, " | "))
		ex = append(ex, site.CleanText(cols[c.cols[0]].values[r]))
	}
	example := strings.Join(ex, " ")
	a.say("undecided: run again with what the page shows for that tee time (here the values %s reads; put the page's):", cols[as.contests[0].cols[0]].label())
	a.say("  %s", a.rerun(example))
	a.contested = cellsSaid
}

// rowText names a sampled row by its tee time and part (and date, when the rows carry one), as
// the page shows them.
func (a *analysis) rowText(as assignment, r int) string {
	var parts []string
	for _, cell := range []string{"round_date", "tee_time", "course", "course_part"} {
		p, ok := as.fields[cell]
		if !ok || p.value != "" {
			continue
		}
		if i := slices.IndexFunc(as.cols, func(c column) bool { return c.where == p.where }); i >= 0 {
			if v := site.CleanText(as.cols[i].values[r]); v != "" {
				parts = append(parts, v)
			}
		}
	}
	if len(parts) == 0 {
		return fmt.Sprintf("row %d", r+1)
	}
	return strings.Join(parts, " ")
}

// rerun is the command to run suggest again with example added: the command as given (Options.
// Command), else a sketch of it.
func (a *analysis) rerun(example string) string {
	cmd := a.o.Command
	if cmd == "" {
		cmd = "crawler suggest …"
	}
	return cmd + " --example " + shellQuote(example)
}

// shellQuote quotes s for a POSIX shell: in single quotes, each ' inside closed, escaped and reopened.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && !strings.ContainsRune("-_./:=,@%+", r)
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ShellCommand is a command line as a shell would take it back: each argument quoted where it
// needs to be (for Options.Command).
func ShellCommand(args ...string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = shellQuote(a)
	}
	return strings.Join(out, " ")
}
