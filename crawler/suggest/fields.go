package suggest

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// pick is how one field is read: from a row's column (where) or from the request (value).
type pick struct {
	where string // a gjson path or a CSS selector within the row
	value string // a template over the request's variables
}

// assignment is the fields found in the rows, with what was said about them.
type assignment struct {
	fields   map[string]pick
	missing  []string // required fields not found
	yearless bool     // round_date is a year-less date read from the rows
	// part is the course_part column chosen by its values (rules (a) and (d) held on the page);
	// it joins the key only if rules (b) and (c) hold too (analysis.checkPart). nil: none, or the
	// empty column named like a course.
	part *column
	// passed are the columns a cell's decision passed over (where → the cell), for --example
	passed map[string]string
}

// assignFields decides which column is which field, by value shape first and name second,
// telling its evidence on say: a column is a candidate for a cell only if the crawl's normaliser
// reads all its values (column.fits), and among the candidates a more telling shape wins (a time
// with ":" or 시 over a four-digit code, a price with 원 or a separator over a bare number).
// targetNames are the given targets' names (nil: none given); crawledAt is the crawl's time a
// year-less date is read at. read, when not nil, reads the fetched page through the crawler's
// parser: of a cell's best candidates the one that reads the most listings wins (decide).
func assignFields(cols []column, targetNames []string, clubName string, crawledAt time.Time, read reader, say func(format string, args ...any)) assignment {
	a := assignment{fields: map[string]pick{}, passed: map[string]string{}}
	used := map[int]bool{}
	// The cells are read before the course part is decided: with the column named like one held
	// as the part (else a club's parts, sharing their tee times, collapse into one listing each,
	// and a column unique per row, the time a row last changed, reads more than the tee time).
	held := heldPart(cols, crawledAt)
	choose := func(field string, byHint bool) int {
		fields := a.fields
		if held >= 0 {
			fields = maps.Clone(a.fields)
			fields["course_part"] = pick{where: cols[held].where}
		}
		cands, skipped := rankedCandidates(cols, used, field, byHint, crawledAt)
		for _, s := range skipped {
			say("%s: %s is no candidate: its values are the rows' positions (1, 2, 3, …), a row number", field, s)
		}
		d := decide(cols, cands, field, fields, read)
		if d.win == nil {
			return -1
		}
		used[d.win.i] = true
		a.fields[field] = pick{where: cols[d.win.i].where}
		if d.runner != nil {
			a.passed[cols[d.runner.i].where] = field
		}
		sayDecision(say, cols, field, d)
		return d.win.i
	}
	if choose("tee_time", false) < 0 {
		a.missing = append(a.missing, "tee_time")
		say("tee_time: no column looks like tee times (06:30, 0630, 06:30:00, 6:30, 06시 30분, 6:30 AM)")
	}
	if choose("price", true) < 0 {
		say("price: no column looks like prices (130000, 130,000, 130,000원, 14만5천원); the listings will have none")
	}
	if choose("players", true) < 0 {
		say("players: no column looks like player counts (1 to 9, 4명); the listings will have none")
	}
	// Every other optional cell outside the listing's identity (a cell added to the crawler's
	// cellTable) is chosen as price and players are, by name first: it needs nothing here.
	for _, c := range site.Cells() {
		if n := c.Name; !c.Required && !c.Identity && n != "price" && n != "players" {
			choose(n, true)
		}
	}
	if choose("round_date", false) >= 0 {
		a.yearless = true
	}
	a.assignCourse(cols, used, targetNames, clubName, crawledAt, say)
	return a
}

// heldPart is the column the cells are read with as the course part until it is decided: the
// one whose name says part most (코스, part), if its values are names and its name and values say
// no person, count or tag; -1 for none.
func heldPart(cols []column, crawledAt time.Time) int {
	best, bestH := -1, 0
	for i, c := range cols {
		if h := hint("course_part", c.name); h > bestH && c.fits(cells["course_part"], crawledAt).ok && notIdentityName(c) == "" {
			best, bestH = i, h
		}
	}
	return best
}

func (a *assignment) assignCourse(cols []column, used map[int]bool, targetNames []string, clubName string, crawledAt time.Time, say func(string, ...any)) {
	var names []int
	for i, c := range cols {
		if c.fits(cells["course"], crawledAt).ok && !used[i] {
			names = append(names, i)
		}
	}
	course := -1
	for _, i := range names {
		n, total := 0, 0
		for _, v := range cols[i].values {
			if v == "" {
				continue
			}
			total++
			switch {
			case len(targetNames) > 0 && slices.Contains(targetNames, site.CleanText(v)):
				n++
			case len(targetNames) == 0 && (looksLikeClub(v) || hint("course", cols[i].name) > 0 && hint("course_part", cols[i].name) == 0):
				n++
			}
		}
		if n > 0 && n*5 >= total*4 {
			course = i
			what := "read like a club's name"
			if len(targetNames) > 0 {
				what = "are a given target's name"
			}
			say("course ← %s: %d of %d rows %s", cols[i].label(), n, total, what)
			break
		}
	}
	switch {
	case course >= 0:
		a.fields["course"] = pick{where: cols[course].where}
		used[course] = true
	case len(targetNames) > 0:
		a.fields["course"] = pick{value: "{{.Target.name}}"}
		say("course ← {{.Target.name}}: no column names a given target, so the club's name comes from the target")
	case clubName != "":
		a.fields["course"] = pick{value: literal(clubName)}
		say("course ← %q (--name): no column names a club and no --target was given: one club, its name from --name", clubName)
	default:
		a.missing = append(a.missing, "course")
		say("course: no column reads like a club's name and no --target was given; give --name 'Club CC' (a site of one club) or --target 'id=...,name=...'")
	}
	part, partH := -1, -1
	for _, i := range names {
		if used[i] {
			continue
		}
		if rule, why := a.notIdentity(cols, cols[i], course); rule != "" {
			say("%s: rejected for the listing key by rule (%s): %s", cols[i].label(), rule, why)
			continue
		}
		if h := hint("course_part", cols[i].name); h > partH {
			part, partH = i, h
		}
	}
	if part >= 0 {
		a.fields["course_part"] = pick{where: cols[part].where}
		a.part = &cols[part]
		f := cols[part].fits(cells["course_part"], crawledAt)
		say("course_part ← %s: %d of %d rows hold a name beside the club's (%s), and the rows are unique by tee time only with it", cols[part].label(), f.n, f.rows, sample(cols[part].values))
		return
	}
	// A club without parts sends the part's member empty: one named like a course still is the
	// part, for the clubs that have them.
	for i, c := range cols {
		if used[i] || sample(c.values) != "" || hint("course", c.name)+hint("course_part", c.name) == 0 || notIdentityName(c) != "" {
			continue
		}
		a.fields["course_part"] = pick{where: c.where}
		say("course_part ← %s: empty in all %d rows, but named like a course: the part, for clubs that have parts (low confidence)", c.label(), len(c.values))
		return
	}
}

func (c column) label() string {
	if c.name != "" && c.name != c.where {
		return fmt.Sprintf("%s (%s)", c.where, c.name)
	}
	return c.where
}

func hintNote(field, name string) string {
	if hint(field, name) > 0 {
		return ", and its name says so"
	}
	return ""
}

// sample is up to three distinct values, for the evidence.
func sample(values []string) string {
	var out []string
	for _, v := range values {
		v = site.CleanText(v)
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
		if len(out) == 3 {
			break
		}
	}
	return strings.Join(out, ", ")
}

// reNotIdentity is what a member's name says when it is about a person, a count or a tag, never
// part of what a tee time is: its caddie, a benefit, a flag.
var reNotIdentity = regexp.MustCompile(`(?i)(caddie|캐디|benefit|혜택|tag|_yn$|yn$|flag|event|이벤트|memo|note|remark|비고|staff|담당|cnt$|count|개수|member|회원|discount|할인)`)

// reTagValue is a value that is a tag or a count, not a name: Y/N, true/false, 0/1, 4명.
var reTagValue = regexp.MustCompile(`^(?i:y|n|yes|no|true|false|[0-9]+(명|개|팀|회)?)$`)

// notIdentityName is rule (d) on a column's name and values: what says person, count or tag.
func notIdentityName(c column) string {
	if m := reNotIdentity.FindString(c.name); m != "" {
		return fmt.Sprintf("its name says %q (a person, count or tag, not part of a tee time)", m)
	}
	tags, n := 0, 0
	for _, v := range c.values {
		v = site.CleanText(v)
		if v == "" {
			continue
		}
		n++
		if strings.Contains(v, "캐디") || strings.Contains(strings.ToLower(v), "caddie") {
			return fmt.Sprintf("its values say %q (a caddie, a person)", v)
		}
		if reTagValue.MatchString(v) {
			tags++
		}
	}
	if n > 0 && tags == n {
		return "its values are tags or counts (Y/N, 0/1, 4명), not names"
	}
	return ""
}

// notIdentity is the rule (and why) by which column c may not join the listing key as the
// course part, on the rows of this page: (d) its name or values say person, count or tag; (a)
// the rows are unique by tee time (and course, and round date) without it, or not with it. ""
// when neither rejects it.
func (a *assignment) notIdentity(cols []column, c column, course int) (rule, why string) {
	if why := notIdentityName(c); why != "" {
		return "d", why
	}
	var key []column
	for _, name := range []string{"tee_time", "round_date"} {
		if p, ok := a.fields[name]; ok {
			for _, k := range cols {
				if k.where == p.where && p.value == "" {
					key = append(key, k)
				}
			}
		}
	}
	if course >= 0 {
		key = append(key, cols[course])
	}
	if len(key) == 0 {
		return "", ""
	}
	without, with := map[string]bool{}, map[string]bool{}
	dupWithout, dupWith := false, false
	for r := range c.values {
		k := ""
		for _, kc := range key {
			k += "\x00" + site.CleanText(kc.values[r])
		}
		if strings.Trim(k, "\x00") == "" {
			continue
		}
		kw := k + "\x00" + site.CleanText(c.values[r])
		dupWithout = dupWithout || without[k]
		dupWith = dupWith || with[kw]
		without[k], with[kw] = true, true
	}
	switch {
	case !dupWithout:
		return "a", "the rows of the date are unique by tee time without it"
	case dupWith:
		return "a", "the rows of the date are not unique by tee time even with it"
	}
	return "", ""
}
