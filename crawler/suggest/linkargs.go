package suggest

import (
	"regexp"
	"strings"

	"github.com/PuerkitoBio/goquery"
)

// Classic club pages show a tee time's values only as the arguments of a javascript: link
// (href="JavaScript:Book_time('20251229','1부','동코스','0630','145000')", or an onclick):
// each argument is a column, read by the link's attribute narrowed by a regex whose one group is
// that argument.

// reJSCall is a javascript: call: its function and its argument list.
var reJSCall = regexp.MustCompile(`(?is)^\s*(?:javascript:)?\s*([A-Za-z_$][\w$]*)\s*\((.*)\)\s*;?\s*$`)

// jsArg is one argument of a call, quoted or bare.
const jsArg = `\s*(?:'[^']*'|"[^"]*"|[^,'"()]*)\s*`

// linkCall parses an attribute's javascript call: its function, its arguments (unquoted) and
// how each was quoted (' or ", 0 bare).
func linkCall(v string) (fn string, args []string, quotes []rune, ok bool) {
	m := reJSCall.FindStringSubmatch(v)
	if m == nil || strings.TrimSpace(m[2]) == "" {
		return "", nil, nil, false
	}
	var cur strings.Builder
	quote, quoted := rune(0), rune(0)
	for _, r := range m[2] {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, quoted = r, r
		case r == ',':
			args, quotes = append(args, strings.TrimSpace(cur.String())), append(quotes, quoted)
			cur.Reset()
			quoted = 0
		case r == '(' || r == ')':
			return "", nil, nil, false // a nested call: not a plain list of values
		default:
			cur.WriteRune(r)
		}
	}
	if quote != 0 {
		return "", nil, nil, false
	}
	return m[1], append(args, strings.TrimSpace(cur.String())), append(quotes, quoted), true
}

// linkWhere is where argument k (quoted by quote, 0 bare) of fn in attribute attr of a tag
// element is read: the element's selector, the attribute and the regex, as setField writes them
// into a field.
func linkWhere(tag, attr, fn string, k int, quote rune) string {
	arg := `\s*([^,'"()]*?)\s*[,)]` // bare: up to the next comma or the end of the call
	if quote != 0 {
		q := string(quote)
		arg = `\s*` + q + `([^` + q + `]*)` + q
	}
	re := regexp.QuoteMeta(fn) + `\s*\(` + strings.Repeat(jsArg+",", k) + arg
	return tag + "[" + attr + `*="` + fn + `("]` + linkSep + attr + regexSep + re
}

const (
	linkSep  = " @"
	regexSep = " ~ "
)

// splitWhere splits linkWhere's form into its selector, attribute and regex; a plain selector
// comes back alone.
func splitWhere(where string) (sel, attr, re string) {
	if rest, ok := strings.CutPrefix(where, linkSep[1:]); ok { // the row's own attribute
		attr, re, _ = strings.Cut(rest, regexSep)
		return "", attr, re
	}
	sel, rest, ok := strings.Cut(where, linkSep)
	if !ok {
		return where, "", ""
	}
	attr, re, _ = strings.Cut(rest, regexSep)
	return sel, attr, re
}

// linkArgs calls add for every argument of the row's javascript: links (href, onclick), with
// its where (linkWhere), a name for it and its value.
func linkArgs(row *goquery.Selection, add func(where, name, value string)) {
	row.Find("[href], [onclick]").Each(func(_ int, el *goquery.Selection) {
		for _, attr := range []string{"href", "onclick"} {
			v, ok := el.Attr(attr)
			if !ok {
				continue
			}
			fn, args, quotes, ok := linkCall(v)
			if !ok {
				continue
			}
			for k, arg := range args {
				add(linkWhere(goquery.NodeName(el), attr, fn, k, quotes[k]), fn+" argument "+itoa(k+1), arg)
			}
		}
	})
}
