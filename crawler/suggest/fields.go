package suggest

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// pick is how one field is read: from a row's column (where) or from the request (value).
type pick struct {
	where string // a gjson path or a CSS selector within the row
	value string // a template over the request's variables
	// sources, for a fallback (sale price, else list price), are the columns read in order, the
	// first that gives a value winning; where is then their label.
	sources []string
}

// pickOf is how column c is read.
func pickOf(c column) pick { return pick{where: c.where, sources: c.sources} }

// assignment is the fields found in the rows, with what was said about them.
type assignment struct {
	fields   map[string]pick
	missing  []string // required fields not found
	yearless bool     // round_date is a year-less date read from the rows
	// part is the course_part column chosen by its name or values (rule (d) held on the page);
	// it joins the key only if rules (b) and (c) hold too and it varies across the rows of one of
	// two dates (analysis.checkPart). nil: none, or the empty column named like a course.
	part *column
	// passed are the columns a cell's decision passed over (where → the cell), for --example
	passed map[string]string
	// contests are the cells whose candidates read the sampled rows alike with other values, and
	// that no rule and no example decided: the entry is not decided (exit 2).
	contests []contest
	// cols are the columns read, with the fallbacks made of them (sale price, else list price).
	cols []column
}

// assignFields decides which column is which field, by value shape first and name second,
// telling its evidence on say: a column is a candidate for a cell only if the crawl's normaliser
// reads all its values (column.fits), and among the candidates a more telling shape wins (a time
// with ":" or 시 over a four-digit code, a price with 원 or a separator over a bare number).
// What a name means rules some out (meaningful: a fee per team is no price, a flag no player
// count), and the golfer's examples bind: of a cell's candidates only those that read the
// example's value in its row stay. targetNames are the given targets' names (nil: none given);
// crawledAt is the crawl's time a year-less date is read at. read, when not nil, reads the
// fetched page through the crawler's parser: of a cell's best candidates the one that reads the
// most listings wins (decide); one that reads them as well with other values is a rival, and a
// rule (payRanks, the name) or an example must settle it, else the cell is a contest.
func assignFields(cols []column, targetNames []string, clubName string, crawledAt time.Time, ex []boundExample, read reader, say func(format string, args ...any)) (assignment, error) {
	a := assignment{fields: map[string]pick{}, passed: map[string]string{}}
	used := map[int]bool{}
	// The cells are read before the course part is decided: with the column named like one held
	// as the part (else a club's parts, sharing their tee times, collapse into one listing each,
	// and a column unique per row, the time a row last changed, reads more than the tee time).
	held := heldPart(cols, crawledAt)
	var failed error
	choose := func(field string, byHint bool) int {
		if failed != nil {
			return -1
		}
		fields := a.fields
		if held >= 0 {
			fields = maps.Clone(a.fields)
			fields["course_part"] = pickOf(cols[held])
		}
		cands, skipped := rankedCandidates(cols, used, field, byHint, crawledAt)
		for _, s := range skipped {
			say("%s: %s is no candidate: its values are the rows' positions (1, 2, 3, …), a row number", field, s)
		}
		all := cands
		cands, constant := meaningful(cols, cands, field, say)
		if field == "price" {
			cols, cands = withFallback(cols, cands, say)
		}
		cands, err := exampleCandidates(cols, cands, all, field, ex, crawledAt, say)
		if err != nil {
			failed = err
			return -1
		}
		d := decide(cols, cands, field, fields, read)
		if d.win == nil {
			if len(constant) > 0 && !exampleGiven(ex) {
				// A count alike in every row, under a name that does not say players: the players
				// of tee times all open, or a number that counts nothing; only the page can say.
				a.contests = append(a.contests, contest{cell: field, cols: constant, none: true})
			}
			return -1
		}
		used[d.win.i] = true
		for _, src := range cols[d.win.i].sources {
			for i, c := range cols {
				if c.where == src && len(c.sources) == 0 {
					used[i] = true
				}
			}
		}
		a.fields[field] = pickOf(cols[d.win.i])
		if d.runner != nil {
			a.passed[cols[d.runner.i].where] = field
		}
		sayDecision(say, cols, field, d)
		if len(d.rivals) > 0 {
			// The rivals read the example's value too (byExample), or no example gives the cell.
			a.contests = append(a.contests, contest{cell: field, cols: append([]int{d.win.i}, d.rivals...)})
		}
		return d.win.i
	}
	if choose("tee_time", false) < 0 && failed == nil {
		a.missing = append(a.missing, "tee_time")
		say("tee_time: no column looks like tee times (06:30, 0630, 06:30:00, 6:30, 06시 30분, 6:30 AM)")
	}
	if choose("price", true) < 0 && failed == nil {
		say("price: no column reads as prices (130000, 130,000, 130,000원, 14만5천원); left out: the listings will have none")
	}
	if choose("players", true) < 0 && failed == nil {
		say("players: no column reads as player counts (1 to 9, 4명); left out: the listings will have none")
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
	} else if i := groupDate(cols); i >= 0 && failed == nil {
		a.fields["round_date"], a.yearless = pickOf(cols[i]), true
		used[i] = true
		say("round_date ← %s: the key of the rows' group is their play date (%s)", cols[i].label(), sample(cols[i].values))
	}
	if failed != nil {
		return a, failed
	}
	a.cols = cols
	if err := a.assignCourse(cols, used, targetNames, clubName, crawledAt, ex, say); err != nil {
		return a, err
	}
	return a, nil
}

// groupDate is the column of a group's key whose every value is a date (dates → courses →
// times: the rows' play date), -1 for none.
func groupDate(cols []column) int {
	for i, c := range cols {
		if _, _, key := splitGroupWhere(c.where); !key || sample(c.values) == "" {
			continue
		}
		if !slices.ContainsFunc(c.values, func(v string) bool { return v != "" && !reFullDate.MatchString(v) }) {
			return i
		}
	}
	return -1
}

// heldPart is the column the cells are read with as the course part until it is decided: the
// one whose name says part (a whole word: part, cos, course; 코스), if its values are names, it
// is no code beside its name, and its name and values say no person, count or tag; -1 for none.
func heldPart(cols []column, crawledAt time.Time) int {
	for i, c := range cols {
		if _, ok := partName(c.name); ok && c.fits(cells["course_part"], crawledAt).ok && notIdentityName(c) == "" && nameSibling(cols, c) < 0 {
			return i
		}
	}
	return -1
}

func (a *assignment) assignCourse(cols []column, used map[int]bool, targetNames []string, clubName string, crawledAt time.Time, ex []boundExample, say func(string, ...any)) error {
	names := nameColumns(cols, used, crawledAt, say)
	course := a.chooseCourse(cols, names, used, targetNames, clubName, say)
	return a.choosePart(cols, names, used, course, targetNames, clubName, crawledAt, ex, say)
}

// nameColumns are the columns not taken that read as names, but a code beside its name (said).
func nameColumns(cols []column, used map[int]bool, crawledAt time.Time, say func(string, ...any)) []int {
	var names []int
	for i, c := range cols {
		if !c.fits(cells["course"], crawledAt).ok || used[i] || len(c.sources) > 0 {
			continue
		}
		if s := nameSibling(cols, c); s >= 0 {
			say("%s: no course or course part: %s beside it is its name (X / X_NM), what the page shows", c.label(), cols[s].label())
			continue
		}
		names = append(names, i)
	}
	return names
}

// chooseCourse sets the course: a column of the given targets' names (or of club names, without
// targets), else the target's name, else --name; it returns the column (-1: none).
func (a *assignment) chooseCourse(cols []column, names []int, used map[int]bool, targetNames []string, clubName string, say func(string, ...any)) int {
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
			case len(targetNames) == 0 && (looksLikeClub(v) || hint("course", cols[i].name) > 0 && hint("course_part", cols[i].name) == 0 && !rePartValue.MatchString(v)):
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
	return course
}

// choosePart sets the course part: a column whose name (a whole word) or values name
// one, that says no person, count or tag (rule (d)); rules (b) and (c), and that it varies across
// the rows of one of two dates, are checked on two more fetches (analysis.checkPart).
func (a *assignment) choosePart(cols []column, names []int, used map[int]bool, course int, targetNames []string, clubName string, crawledAt time.Time,
	ex []boundExample, say func(string, ...any)) error {
	var parts []int
	why := map[int]string{}
	for _, i := range names {
		if used[i] {
			continue
		}
		c := cols[i]
		if r := notIdentityName(c); r != "" {
			say("%s: rejected for the listing key by rule (d): %s", c.label(), r)
			continue
		}
		w, byName := partName(c.name)
		v, byValues := partValues(c.values)
		code := codedBy(cols, c)
		switch {
		case byName:
			why[i] = fmt.Sprintf("its name says %q", w)
		case code >= 0 && partNamed(cols[code].name):
			why[i] = fmt.Sprintf("it names the codes of %s, named like a part (X / X_NM: the name is what the page shows)", cols[code].label())
		case byValues:
			why[i] = fmt.Sprintf("its values name course parts (%s)", v)
		default:
			continue
		}
		parts = append(parts, i)
	}
	// Codes of parts (1, 2, 3; A, B) under a name that says part (p.resv's course attribute):
	// not names to look at, but what the page keys its parts by.
	for i, c := range cols {
		if used[i] || i == course || slices.Contains(names, i) || len(c.sources) > 0 || nameSibling(cols, c) >= 0 {
			continue
		}
		if w, ok := partName(c.name); ok && shortCodes(c.values) && reNotIdentity.FindString(c.name) == "" {
			parts = append(parts, i)
			why[i] = fmt.Sprintf("its name says %q, and its values are codes", w)
		}
	}
	// Of two, the one named like a part, then the one first on the page.
	slices.SortStableFunc(parts, func(x, y int) int {
		_, nx := partName(cols[x].name)
		_, ny := partName(cols[y].name)
		return boolRank(ny) - boolRank(nx)
	})
	if names, ok := exampleNames(ex); ok {
		var reading []int
		for _, i := range parts {
			if exampleReadsColumn(ex, cols[i], "course_part", crawledAt) {
				reading = append(reading, i)
			}
		}
		switch {
		case len(reading) > 0 && reading[0] != parts[0]:
			say("course_part: decided by the golfer's example (%s): %s reads it; not %s", names, cols[reading[0]].label(), cols[parts[0]].label())
		case len(reading) == 0:
			// No column named like a part or holding part names reads it: a name-like column
			// that does (TeeType 1A, 1B) is the part the page shows.
			for _, i := range names0(cols, used, course) {
				if notIdentityName(cols[i]) == "" && exampleReadsColumn(ex, cols[i], "course_part", crawledAt) && !exampleReadsClub(ex, targetNames, clubName, crawledAt) {
					reading = append(reading, i)
					why[i] = "the golfer's example (" + names + ") names it"
					say("course_part: decided by the golfer's example (%s): %s reads it", names, cols[i].label())
					break
				}
			}
		}
		if len(reading) > 0 {
			parts = reading
		}
	}
	if len(parts) > 0 {
		i := parts[0]
		a.fields["course_part"] = pick{where: cols[i].where}
		a.part = &cols[i]
		f := cols[i].fits(cells["course_part"], crawledAt)
		if f.n > 0 {
			say("course_part ← %s: %d of %d rows hold a name beside the club's (%s), and %s", cols[i].label(), f.n, f.rows, sample(cols[i].values), why[i])
		} else {
			say("course_part ← %s: %s (%s)", cols[i].label(), why[i], sample(cols[i].values))
		}
		return nil
	}
	// A club without parts sends the part's member empty: one named like a course still is the
	// part, for the clubs that have them.
	for i, c := range cols {
		_, byName := partName(c.name)
		if used[i] || sample(c.values) != "" || !byName && hint("course", c.name) == 0 || notIdentityName(c) != "" || len(c.sources) > 0 {
			continue
		}
		a.fields["course_part"] = pick{where: c.where}
		say("course_part ← %s: empty in all %d rows, but named like a course: the part, for clubs that have parts (low confidence)", c.label(), len(c.values))
		return nil
	}
	return nil
}

// names0 are the columns that read as names, not taken, not the course, and no code beside its
// name: what may be a course part.
func names0(cols []column, used map[int]bool, course int) []int {
	var out []int
	for i, c := range cols {
		if i != course && !used[i] && len(c.sources) == 0 && nameSibling(cols, c) < 0 && c.fits(cells["course_part"], time.Time{}).ok {
			out = append(out, i)
		}
	}
	return out
}

// exampleReadsClub reports whether every example's name is the club's (a given target's, or
// --name): then it names no part.
func exampleReadsClub(ex []boundExample, targetNames []string, clubName string, crawledAt time.Time) bool {
	clubs := append(slices.Clone(targetNames), clubName)
	for _, e := range ex {
		for _, v := range e.values {
			if v.cell != nameCell && v.cell != "course_part" {
				continue
			}
			if !slices.ContainsFunc(clubs, func(c string) bool { return c != "" && v.reads(c, "course", crawledAt) }) {
				return false
			}
		}
	}
	return true
}

// shortCodes reports whether a column's non-empty values (one at least) are short codes: up to
// four letters or digits.
func shortCodes(values []string) bool {
	n := 0
	for _, v := range values {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		if len([]rune(v)) > 4 || strings.IndexFunc(v, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) >= 0 {
			return false
		}
		n++
	}
	return n > 0
}

// partNamed reports whether a name says a course part by a whole word.
func partNamed(name string) bool { _, ok := partName(name); return ok }

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
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
