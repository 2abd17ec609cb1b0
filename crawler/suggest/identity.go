package suggest

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/golfcrawler/golf-crawler/internal/retry"
)

// maxPartValues is the most distinct values a course part takes on a date (rule (c)).
const maxPartValues = 6

// checkPart applies rules (b) and (c) to the course_part column the page's rows chose (rules (a)
// and (d) held there): (b) it reads the same for every tee time in a second fetch of the date,
// (c) on the next date its values are at most maxPartValues distinct ones, all among the first
// date's. Two more requests; a column that fails either is left out of the entry, and said.
func (a *analysis) checkPart(ctx context.Context) error {
	if a.part == nil {
		return nil
	}
	first := a.partValues(ctx, a.page.Body)
	if !a.t.dateFound {
		a.say("course_part: rules (b) and (c) not checked: the request names no date to ask again or move")
		if n := distinctParts(first); n < 2 {
			a.rejectPart("varies", fmt.Sprintf("it reads %d value on %s and the request names no other date to look at", n, a.date.Format("2006-01-02")))
		}
		return nil
	}
	again, err := a.fetchAt(ctx, a.date)
	if err != nil {
		return err
	}
	a.say("course_part: fetched %s again (rule (b)): status %d, %d bytes", again.Request, again.Status, len(again.Body))
	if again.Err == nil {
		second := a.partValues(ctx, again.Body)
		for tee, vs := range first {
			if ws, ok := second[tee]; ok && len(ws) == len(vs) && !slices.Equal(ws, vs) {
				a.rejectPart("b", fmt.Sprintf("a second fetch of %s reads %s at %s where the first read %s", a.date.Format("2006-01-02"),
					strings.Join(ws, ", "), strings.ReplaceAll(strings.TrimPrefix(tee, "\x00"), "\x00", " "), strings.Join(vs, ", ")))
				return nil
			}
		}
	}
	next := a.date.AddDate(0, 0, 1)
	np, err := a.fetchAt(ctx, next)
	if err != nil {
		return err
	}
	a.say("course_part: fetched %s (rule (c)): status %d, %d bytes", np.Request, np.Status, len(np.Body))
	third := a.partValues(ctx, np.Body)
	if np.Err != nil || len(third) == 0 {
		a.say("course_part: rule (c) not checked: %s answered no rows", next.Format("2006-01-02"))
		third = nil
	}
	if n1, n2 := distinctParts(first), distinctParts(third); n1 < 2 && n2 < 2 {
		a.rejectPart("varies", fmt.Sprintf("it reads one value at most on %s (%d) and on %s (%d): it tells no tee times apart",
			a.date.Format("2006-01-02"), n1, next.Format("2006-01-02"), n2))
		return nil
	}
	if third == nil {
		return nil
	}
	known := map[string]bool{} // course NUL part, of the first date
	for k, vs := range first {
		course, _, _ := strings.Cut(k, "\x00")
		for _, v := range vs {
			known[course+"\x00"+v] = true
		}
	}
	distinct := map[string]map[string]bool{} // per course
	most := 0
	for k, vs := range third {
		course, _, _ := strings.Cut(k, "\x00")
		if distinct[course] == nil {
			distinct[course] = map[string]bool{}
		}
		for _, v := range vs {
			distinct[course][v] = true
			most = max(most, len(distinct[course]))
			if !known[course+"\x00"+v] {
				a.rejectPart("c", fmt.Sprintf("on %s it reads %q%s, which %s never did", next.Format("2006-01-02"), v, ofCourse(course), a.date.Format("2006-01-02")))
				return nil
			}
		}
		if n := len(distinct[course]); n > maxPartValues {
			a.rejectPart("c", fmt.Sprintf("on %s it takes %d distinct values%s (a course has at most %d parts)", next.Format("2006-01-02"), n, ofCourse(course), maxPartValues))
			return nil
		}
	}
	a.say("course_part: rules (b) and (c) hold: a second fetch reads the same, and %s's values (at most %d a course) are among %s's", next.Format("2006-01-02"), most, a.date.Format("2006-01-02"))
	return a.otherTargetPart(ctx)
}

// noneWords are what a part's cell says for a club without parts (없음: none): no part's name.
var noneWords = []string{"없음", "해당없음", "미정", "none", "n/a"}

// otherTargetPart fetches the play date for another given target than the request's and reads
// its course part: a club without parts may say so in words (없음) where the sampled club names
// its parts, and the crawl would key its listings by that word. When it does, the part's field
// gets a regex that reads every value but that word (the cell then reads as no part). One more
// request for each other target, maxOtherTargets at most, only with two targets or more.
func (a *analysis) otherTargetPart(ctx context.Context) error {
	if a.t.target == nil || len(a.o.Targets) < 2 {
		return nil
	}
	f := a.out.Fields["course_part"]
	if f.Regex != "" {
		return nil
	}
	fetched := 0
	for _, tg := range a.o.Targets {
		if tg["id"] == "" || tg["id"] == a.t.target["id"] {
			continue
		}
		if err := retry.Sleep(ctx, a.o.Fetcher.delay()); err != nil {
			return err
		}
		p, err := a.o.Fetcher.Fetch(ctx, a.t.full, tg, a.date, a.t.secret)
		if err != nil {
			return err
		}
		a.say("course_part: fetched %s (the play date of target %s): status %d, %d bytes", p.Request, tg["name"], p.Status, len(p.Body))
		if p.Err != nil {
			continue
		}
		for _, vs := range a.partValues(ctx, p.Body) {
			for _, v := range vs {
				if w := strings.ToLower(v); slices.Contains(noneWords, w) {
					f.Regex = notExactly(v)
					a.out.Fields["course_part"] = f
					a.say("course_part: target %s's rows say %q (none: a club without parts): the field reads every value but it (regex %s), so such a row has no part", tg["name"], v, f.Regex)
					return nil
				}
			}
		}
		if fetched++; fetched == maxOtherTargets {
			break
		}
	}
	return nil
}

// maxOtherTargets bounds otherTargetPart's requests.
const maxOtherTargets = 3

// notExactly is a regex whose one group reads any non-empty text but w itself (RE2 has no
// negative look-ahead: the text differs from w at some rune, or is longer, or a strict prefix).
func notExactly(w string) string {
	rs := []rune(w)
	var alts []string
	for i := range rs {
		prefix := regexp.QuoteMeta(string(rs[:i]))
		alts = append(alts, prefix+"[^"+regexp.QuoteMeta(string(rs[i]))+"].*")
		if i > 0 {
			alts = append(alts, prefix)
		}
	}
	alts = append(alts, regexp.QuoteMeta(w)+".+")
	return "^(" + strings.Join(alts, "|") + ")$"
}

func ofCourse(course string) string {
	if course == "" {
		return ""
	}
	return " for " + course
}

func (a *analysis) rejectPart(rule, why string) {
	a.say("%s: rejected for the listing key by rule (%s): %s; course_part left out", a.part.label(), rule, why)
	delete(a.out.Fields, "course_part")
	a.part = nil
}

// fetchAt fetches the request for date as the browser asked, after the politeness's delay.
func (a *analysis) fetchAt(ctx context.Context, date time.Time) (Page, error) {
	if err := retry.Sleep(ctx, a.o.Fetcher.delay()); err != nil {
		return Page{}, err
	}
	return a.o.Fetcher.Fetch(ctx, a.t.full, a.t.target, date, a.t.secret)
}

// partValues reads the course part of an answer's rows as the entry reads them (the crawler's
// parser): per course (when a column names it) and tee time, joined by NUL, its values sorted
// (one per row at that time).
func (a *analysis) partValues(ctx context.Context, body []byte) map[string][]string {
	out := map[string][]string{}
	ls, err := a.rowListings(ctx, body)
	if err != nil {
		return out
	}
	for i, l := range ls {
		if i == SampleRows {
			break
		}
		k := ""
		if f := a.out.Fields["course"]; f.Value == "" {
			k = l.CourseName
		}
		k += "\x00" + l.TeeTime
		out[k] = append(out[k], l.CoursePart)
	}
	return sortedValuesOf(out)
}

// distinctParts is how many distinct values a date's course part takes across its rows (within a
// course, at most: every club's parts are their own).
func distinctParts(m map[string][]string) int {
	per := map[string]map[string]bool{}
	most := 0
	for k, vs := range m {
		course, _, _ := strings.Cut(k, "\x00")
		if per[course] == nil {
			per[course] = map[string]bool{}
		}
		for _, v := range vs {
			if v != "" {
				per[course][v] = true
			}
		}
		most = max(most, len(per[course]))
	}
	return most
}

// sortedValuesOf sorts each tee time's values: a second fetch may list the parts in another order.
func sortedValuesOf(m map[string][]string) map[string][]string {
	for _, vs := range m {
		slices.Sort(vs)
	}
	return m
}
