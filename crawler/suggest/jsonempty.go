package suggest

import (
	"context"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// notOpenJSON proposes json.not_open_when when the far-ahead answer says something else than
// the sold-out one in a result member (a code or message): the far-ahead date is not open yet.
func (a *analysis) notOpenJSON(soldOut, far []byte) {
	so, fa := gjson.ParseBytes(soldOut), gjson.ParseBytes(far)
	for _, m := range a.resultMembers(fa) {
		v, path := m.v, m.path
		if v.Type != gjson.String || !steady(v.String()) {
			continue
		}
		if sv := so.Get(path); sv.Exists() && sv.String() != v.String() {
			a.out.JSON.NotOpenWhen = []site.JSONCondition{{Path: path, Equals: v.String()}}
			a.say("json.not_open_when ← %s equals %q: the far-ahead date says it where a sold-out date says %q: not open yet, it opens and closes nothing", path, v.String(), sv.String())
			return
		}
	}
}

// resultMember is a member of a JSON answer that may say how the request went.
type resultMember struct {
	path, name string
	v          gjson.Result
}

// resultMembers are the scalar members of an answer's top level and of its objects one level
// down (result.status) that resultName takes, in the answer's order.
func (a *analysis) resultMembers(doc gjson.Result) []resultMember {
	var out []resultMember
	doc.ForEach(func(k, v gjson.Result) bool {
		name := k.String()
		switch {
		case v.IsObject():
			v.ForEach(func(k2, v2 gjson.Result) bool {
				if n2 := k2.String(); !v2.IsObject() && !v2.IsArray() && a.resultName(n2) && a.resultName(name+"."+n2) {
					out = append(out, resultMember{path: gjsonPath([]string{name, n2}), name: n2, v: v2})
				}
				return true
			})
		case !v.IsArray() && a.resultName(name):
			out = append(out, resultMember{path: gjsonPath([]string{name}), name: name, v: v})
		}
		return true
	})
	return out
}

// steady reports whether a message is the same on every date it is said on: a code (9001,
// NO_DATA), or a sentence without digits (a count or a date in it changes from day to day).
func steady(s string) bool {
	return reCode.MatchString(s) || !strings.ContainsAny(s, "0123456789")
}

// resultName reports whether a top-level member of a JSON answer may say how the request went
// (a code, a message, a status): named so, and no echo of the request's own parameters (an answer
// that repeats CourseCode=138 says nothing of the result, and another club's page would fail).
func (a *analysis) resultName(name string) bool {
	if !reCodeName.MatchString(name) {
		return false
	}
	return !slices.ContainsFunc(requestNames(a.t.full), func(n string) bool { return strings.EqualFold(n, name) })
}

// requestNames are the names of a request's parameters: its query's, form's and JSON body's.
func requestNames(rt site.RequestTemplate) []string {
	var out []string
	if u, err := url.Parse(rt.URL); err == nil {
		for k := range u.Query() {
			out = append(out, k)
		}
	}
	for k := range rt.Form {
		out = append(out, k)
	}
	for k := range rt.JSON {
		out = append(out, k)
	}
	return out
}

var (
	reCodeName = regexp.MustCompile(`(?i)(code|result|status|success|msg|message|rtn|ret)`)
	reCode     = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,20}$`) // a code, not a sentence
)

func (a *analysis) emptyJSON(ctx context.Context, full, empty []byte) {
	j := a.out.JSON
	rows := gjson.GetBytes(empty, j.Rows)
	if rows.IsArray() && len(rows.Array()) > 0 {
		if c, ok := a.markerRow(ctx, empty, rows); ok {
			j.EmptyWhen = []site.JSONCondition{c}
			a.say("empty_when ← %s equals %q: the empty answer's rows hold only this marker, no tee time (with the entry such an answer is sold out, not a rejected row)", c.Path, c.Equals)
			return
		}
		a.say("probe-empty: the empty date has %d rows too; what an empty answer looks like is unknown (empty_when left out)", len(rows.Array()))
		return
	}
	fullDoc, emptyDoc := gjson.ParseBytes(full), gjson.ParseBytes(empty)
	var differs *site.JSONCondition
	for _, m := range a.resultMembers(emptyDoc) {
		v, path := m.v, m.path
		if v.Type == gjson.Null {
			continue
		}
		fv := fullDoc.Get(path)
		switch {
		case !fv.Exists():
		case fv.String() == v.String() && j.Success == nil && strings.Contains(strings.ToLower(m.name), "code"):
			j.Success = &site.JSONCondition{Path: path, Equals: v.String()}
			a.say("json.success ← %s equals %q: the result code of both the answer with rows and the empty one", path, v.String())
		case fv.String() != v.String() && differs == nil && v.Type == gjson.String && steady(v.String()):
			differs = &site.JSONCondition{Path: path, Equals: v.String()}
			a.say("empty_when ← %s equals %q: it says %q when there are rows", path, v.String(), fv.String())
			if j.Success == nil && reCode.MatchString(fv.String()) {
				j.Success = &site.JSONCondition{Path: path, Equals: fv.String()}
				a.say("json.success ← %s equals %q: what the answer with rows says (an error answer fails the page)", path, fv.String())
			}
		}
	}
	if differs != nil {
		j.EmptyWhen = []site.JSONCondition{*differs}
		return
	}
	if c, ok := countMember(fullDoc, emptyDoc); ok {
		j.EmptyWhen = []site.JSONCondition{c}
		a.say("empty_when ← %s equals \"0\": it counts the rows (%s with rows)", c.Path, fullDoc.Get(c.Path).String())
		if j.Success == nil {
			a.successFromShared(fullDoc, emptyDoc)
		}
		return
	}
	rowsPath, _, _ := strings.Cut(j.Rows, "[]") // a grouped rows path: its outermost part
	j.EmptyWhen = []site.JSONCondition{emptyCond(emptyDoc, rowsPath)}
	a.say("empty_when ← %s is %s: so the empty answer reads", j.EmptyWhen[0].Path, j.EmptyWhen[0].Is)
	if j.Success == nil {
		a.successFromShared(fullDoc, emptyDoc)
	}
}

// markerRow is the empty_when of an empty answer whose rows array holds rows the entry reads no
// listing from (a marker: {"msg":"예약 가능한 시간이 없습니다"}): the first steady text member of its
// first row.
func (a *analysis) markerRow(ctx context.Context, body []byte, rows gjson.Result) (site.JSONCondition, bool) {
	if ls, err := a.rowListings(ctx, body); err == nil && len(ls) > 0 || strings.Contains(a.out.JSON.Rows, "[]") {
		return site.JSONCondition{}, false
	}
	var out site.JSONCondition
	found := false
	rows.Array()[0].ForEach(func(k, v gjson.Result) bool {
		if v.Type == gjson.String && v.Str != "" && steady(v.Str) {
			out, found = site.JSONCondition{Path: a.out.JSON.Rows + ".0." + gjsonPath([]string{k.String()}), Equals: v.Str}, true
			return false
		}
		return true
	})
	return out, found
}

// reCountName is a member's name that counts something (count, cnt, total, totalCount).
var reCountName = regexp.MustCompile(`(?i)(count|cnt|total)`)

// countMember is a top-level number member named like a count that is above 0 in the answer
// with rows and 0 in the empty one: the answer's count of its rows.
func countMember(full, empty gjson.Result) (site.JSONCondition, bool) {
	var out site.JSONCondition
	found := false
	empty.ForEach(func(k, v gjson.Result) bool {
		name := k.String()
		if v.Type != gjson.Number || v.String() != "0" || !reCountName.MatchString(name) {
			return true
		}
		path := gjsonPath([]string{name})
		if fv := full.Get(path); fv.Type == gjson.Number && fv.Int() > 0 {
			out, found = site.JSONCondition{Path: path, Equals: "0"}, true
			return false
		}
		return true
	})
	return out, found
}

// successFromShared sets json.success to a status-like member both answers share: without one,
// an is-condition would also hold for an error answer that lacks the rows (crawler check warns).
func (a *analysis) successFromShared(full, empty gjson.Result) {
	for _, m := range a.resultMembers(empty) {
		v, path := m.v, m.path
		if v.Type == gjson.Null {
			continue
		}
		if fv := full.Get(path); fv.Exists() && fv.String() == v.String() {
			a.out.JSON.Success = &site.JSONCondition{Path: path, Equals: v.String()}
			a.say("json.success ← %s equals %q: both answers say it", path, v.String())
			break
		}
	}
	if a.out.JSON.Success == nil && full.IsArray() && empty.IsArray() {
		a.out.JSON.Success = &site.JSONCondition{Path: "#", Is: "present"}
		a.say("json.success ← # is present: both answers are an array (an error answer, an object, fails the page)")
	}
	if a.out.JSON.Success == nil {
		a.say("json.success: no member that both answers share says success; an error answer without %s would read as sold out (crawler check warns)", a.out.JSON.EmptyWhen[0].Path)
	}
}

// emptyCond is the condition the empty answer meets at the rows path: the shortest prefix that
// is null or absent, else the rows being empty.
func emptyCond(doc gjson.Result, rows string) site.JSONCondition {
	parts := splitPath(rows)
	for i := 1; i <= len(parts); i++ {
		p := strings.Join(parts[:i], ".")
		v := doc.Get(p)
		if !v.Exists() || v.Type == gjson.Null {
			return site.JSONCondition{Path: p, Is: "null"}
		}
	}
	return site.JSONCondition{Path: rows, Is: "empty"}
}

// splitPath splits a gjson path at its unescaped dots.
func splitPath(p string) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(p); i++ {
		switch {
		case p[i] == '\\' && i+1 < len(p):
			cur.WriteByte(p[i])
			cur.WriteByte(p[i+1])
			i++
		case p[i] == '.':
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(p[i])
		}
	}
	return append(out, cur.String())
}
