package crawler

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/PuerkitoBio/goquery"
)

// The reasons a page fails (key reason in the log, label of crawler_pages_failed_total).
const (
	FailNoList    = "no_list"    // an HTML page with neither rows nor its list: a maintenance or error page
	FailBadAnswer = "bad_answer" // a JSON answer that is neither rows nor a declared empty answer
	FailFetch     = "fetch"      // anything else: no answer, an error status, refused, too large, the login
)

// pageFailure is a page's failure with its reason; its text is the cause's.
type pageFailure struct {
	reason string
	err    error
}

func (f *pageFailure) Error() string { return f.err.Error() }
func (f *pageFailure) Unwrap() error { return f.err }

// failReason is the reason of a page's failure: the one it carries, else FailFetch.
func failReason(err error) string {
	if f, ok := errors.AsType[*pageFailure](err); ok {
		return f.reason
	}
	if errors.Is(err, ErrUndecodable) {
		return FailUndecodable
	}
	return FailFetch
}

// errNoList is the cause of a FailNoList failure.
var errNoList = errors.New("the page shows neither rows nor its list (a maintenance or error page?)")

// deriveList derives the selector of the element that holds the rows from the row selector: each
// comma-separated alternative without its last compound selector ("table.tee-list tr.tee-row" →
// "table.tee-list", "#resList > tbody > tr" → "#resList > tbody"). It fails for an alternative
// of one compound ("tr.slot") or whose last combinator is a sibling one (+, ~): the holder is not
// named there.
func deriveList(row string) (string, bool) {
	var out []string
	for _, alt := range splitTop(row, ',') {
		alt = strings.TrimSpace(alt)
		from, to := lastCombinator(alt)
		if from < 0 || strings.ContainsAny(alt[from:to], "+~") {
			return "", false
		}
		head := strings.TrimSpace(alt[:from])
		if head == "" {
			return "", false
		}
		out = append(out, head)
	}
	if len(out) == 0 || checkSelector(strings.Join(out, ", ")) != nil {
		return "", false
	}
	return strings.Join(out, ", "), true
}

// scanTop calls fn for every byte of s with whether it is at the top level: outside brackets,
// parentheses, quotes and escapes.
func scanTop(s string, fn func(i int, c byte, top bool)) {
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			fn(i, c, false)
			if i+1 < len(s) {
				i++
				fn(i, s[i], false)
			}
			continue
		case quote != 0:
			if c == quote {
				quote = 0
			}
			fn(i, c, false)
			continue
		case c == '"' || c == '\'':
			quote = c
		case c == '(' || c == '[':
			depth++
		case c == ')' || c == ']':
			depth--
		}
		fn(i, c, depth == 0 && quote == 0)
	}
}

// splitTop splits s at sep outside brackets, parentheses and quotes.
func splitTop(s string, sep byte) []string {
	var out []string
	start := 0
	scanTop(s, func(i int, c byte, top bool) {
		if top && c == sep {
			out = append(out, s[start:i])
			start = i + 1
		}
	})
	return append(out, s[start:])
}

// lastCombinator is where the last top-level combinator (spaces, >, +, ~) of one selector
// alternative starts and ends, or -1, -1 when it has one compound only.
func lastCombinator(s string) (from, to int) {
	from, to = -1, -1
	inRun := false
	scanTop(s, func(i int, c byte, top bool) {
		isComb := top && strings.IndexByte(" \t\n>+~", c) >= 0
		switch {
		case isComb && !inRun:
			from, inRun = i, true
		case !isComb && inRun:
			to, inRun = i, false
		}
	})
	if inRun || to < 0 { // a trailing combinator, or none
		return -1, -1
	}
	return from, to
}

var reIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// maxHolderDepth bounds how far up holderOf looks for an element with an id or a class.
const maxHolderDepth = 4

// holderOf is a selector of the element that holds row: its parents up to the nearest one with
// an id or a class (at most maxHolderDepth, never body or html), outermost first, joined by ">"
// ("table.tee-list > tbody"). Empty when the row sits right in the body.
func holderOf(row *goquery.Selection) string {
	var chain []string
	for p, i := row.Parent(), 0; p.Length() > 0 && i < maxHolderDepth; p, i = p.Parent(), i+1 {
		tag := goquery.NodeName(p)
		if tag == "body" || tag == "html" || tag == "#document" {
			break
		}
		c := tag
		marked := false
		if id, ok := p.Attr("id"); ok && reIdent.MatchString(id) {
			c += "#" + id
			marked = true
		}
		if class, ok := p.Attr("class"); ok {
			for _, cl := range strings.Fields(class) {
				if reIdent.MatchString(cl) {
					c += "." + cl
					marked = true
				}
			}
		}
		chain = append(chain, c)
		if marked {
			break
		}
	}
	if len(chain) == 0 {
		return ""
	}
	slices.Reverse(chain)
	sel := strings.Join(chain, " > ")
	if checkSelector(sel) != nil {
		return ""
	}
	return sel
}

// mostSeen is the holder seen on most pages (the smallest on a tie); empty when none.
func mostSeen(seen map[string]int) string {
	best, n := "", 0
	for sel, c := range seen {
		if c > n || (c == n && sel < best) {
			best, n = sel, c
		}
	}
	return best
}

// seen records what a parsed page showed: the holder of its rows, or the failure of a page that
// showed neither rows nor its list.
func (cr *crawl) seen(pg page) error {
	if pg.NoList {
		return &pageFailure{FailNoList, fmt.Errorf("%w: no %q", errNoList, cmp.Or(cr.site.list, cr.deps.ListHint))}
	}
	if pg.Holder != "" {
		cr.mu.Lock()
		cr.holders[pg.Holder]++
		cr.mu.Unlock()
	}
	return nil
}
