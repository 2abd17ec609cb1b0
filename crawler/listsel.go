package crawler

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/andybalholm/cascadia"
)

// The reasons a page fails (key reason in the log, label of crawler_pages_failed_total).
const (
	FailNoList    = "no_list"    // an HTML page with neither rows nor its list: a maintenance or error page
	FailBadAnswer = "bad_answer" // a JSON answer that is neither rows nor a declared empty answer
	FailFetch     = "fetch"      // anything else: no answer, an error status, refused, too large, the login
	FailCapture   = "capture"    // a capturing request's answer lacks a value it captures (capture.go)
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
	if _, err := cascadia.Compile(sel); err != nil {
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
		return &pageFailure{FailNoList, fmt.Errorf("%w: no %q", errNoList, cmp.Or(cr.site.ListSelector(), cr.deps.ListHint))}
	}
	if pg.Holder != "" {
		cr.mu.Lock()
		cr.holders[pg.Holder]++
		cr.mu.Unlock()
	}
	return nil
}
