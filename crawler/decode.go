package crawler

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"golang.org/x/net/html"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/unicode"
)

// ErrUndecodable is the failure of a page whose cells still hold U+FFFD (or invalid UTF-8) after
// decoding: its charset is undeclared or wrong. The whole page fails, like a failed fetch, so its
// page set is withheld; its rows are never dropped one by one, which would close them as booked.
var ErrUndecodable = errors.New("undecodable")

// FailUndecodable is the reason key of an undecodable page's log line.
const FailUndecodable = "undecodable"

// decoding says how a page was decoded: the encoding's name and what chose it.
type decoding struct {
	Name string // canonical name, e.g. "euc-kr"
	By   string // "site" (the charset key), "bom", "header", "meta" or "default" (UTF-8)
}

func (d decoding) String() string { return d.Name + " (by " + d.By + ")" }

// contentTypeHeader keeps a response's Content-Type for decodeBody: rawCharset hides the charset
// from colly, which would otherwise convert the body itself, without the prescan or the aliases.
const contentTypeHeader = "X-Golf-Crawler-Content-Type"

// rawCharset is the collector's transport: it moves the Content-Type to contentTypeHeader and
// leaves colly the bare media type, so the body reaches the crawler as sent.
type rawCharset struct{ base http.RoundTripper }

func (t rawCharset) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp == nil {
		return resp, err
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		resp.Header.Set(contentTypeHeader, ct)
		media, _, _ := strings.Cut(ct, ";")
		resp.Header.Set("Content-Type", strings.TrimSpace(media))
	}
	return resp, nil
}

// responseContentType is the Content-Type a response was sent with (see rawCharset).
func responseContentType(h *http.Header) string {
	if h == nil {
		return ""
	}
	if ct := h.Get(contentTypeHeader); ct != "" {
		return ct
	}
	return h.Get("Content-Type")
}

// decodeBody returns body in UTF-8, decoded as a browser would: the site's charset key when set
// (it overrides everything), else a byte order mark, else the HTTP charset, else (HTML only) the
// <meta> prescan of the first 1024 bytes, else UTF-8. Undecodable bytes become U+FFFD, which
// checkDecoded then refuses.
func decodeBody(st *site.Site, contentType string, body []byte) ([]byte, decoding) {
	e, d := pageEncoding(st, contentType, body)
	if d.Name == "utf-8" {
		body = bytes.TrimPrefix(body, []byte("\ufeff"))
		if utf8.Valid(body) {
			return body, d
		}
		return bytes.ToValidUTF8(body, []byte("\ufffd")), d
	}
	out, err := e.NewDecoder().Bytes(body)
	if err != nil {
		return bytes.ToValidUTF8(body, []byte("\ufffd")), d
	}
	return out, d
}

// boms are the byte order marks a browser honours before any declaration.
var boms = []struct {
	bom  []byte
	enc  encoding.Encoding
	name string
}{
	{[]byte{0xEF, 0xBB, 0xBF}, unicode.UTF8, "utf-8"},
	{[]byte{0xFE, 0xFF}, unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM), "utf-16be"},
	{[]byte{0xFF, 0xFE}, unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM), "utf-16le"},
}

// reCharsetParam finds the charset parameter of a Content-Type, leniently (servers send
// "text/html;charset=EUC-KR", "charset = 'euc-kr'" and worse).
var reCharsetParam = regexp.MustCompile(`(?i)charset\s*=\s*["']?([^"';\s]+)`)

// pageEncoding chooses a page's encoding; see decodeBody.
func pageEncoding(st *site.Site, contentType string, body []byte) (encoding.Encoding, decoding) {
	if st.Charset != "" {
		if e, name, err := site.LookupCharset(string(st.Charset)); err == nil {
			return e, decoding{name, "site"}
		}
	}
	for _, b := range boms {
		if bytes.HasPrefix(body, b.bom) {
			return b.enc, decoding{b.name, "bom"}
		}
	}
	if m := reCharsetParam.FindStringSubmatch(contentType); m != nil {
		if e, name, err := site.LookupCharset(m[1]); err == nil {
			return e, decoding{name, "header"}
		}
	}
	if st.Format != site.FormatJSON {
		if label := prescan(body); label != "" {
			if e, name, err := site.LookupCharset(label); err == nil {
				if strings.HasPrefix(name, "utf-16") { // a <meta> that says UTF-16 means UTF-8 (WHATWG)
					return unicode.UTF8, decoding{"utf-8", "meta"}
				}
				return e, decoding{name, "meta"}
			}
		}
	}
	return unicode.UTF8, decoding{"utf-8", "default"}
}

// prescanBytes is how much of a page the <meta> prescan reads, as browsers do.
const prescanBytes = 1024

// prescan returns the charset label the first <meta charset> or <meta http-equiv="Content-Type"
// content="...; charset=..."> of the page's first 1024 bytes declares, "" when none does.
func prescan(body []byte) string {
	if len(body) > prescanBytes {
		body = body[:prescanBytes]
	}
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if string(name) != "meta" || !hasAttr {
				continue
			}
			if label := metaCharset(z); label != "" {
				return label
			}
		}
	}
}

// metaCharset is the charset a <meta> tag's attributes declare, "" for none.
func metaCharset(z *html.Tokenizer) string {
	var charset, content string
	httpEquiv := false
	for {
		k, v, more := z.TagAttr()
		switch string(k) {
		case "charset":
			charset = string(v)
		case "content":
			content = string(v)
		case "http-equiv":
			httpEquiv = strings.EqualFold(strings.TrimSpace(string(v)), "content-type")
		}
		if !more {
			break
		}
	}
	if charset != "" {
		return charset
	}
	if httpEquiv {
		if m := reCharsetParam.FindStringSubmatch(content); m != nil {
			return m[1]
		}
	}
	return ""
}

// checkDecoded fails a page (ErrUndecodable) when any cell it supplied still holds U+FFFD or
// invalid UTF-8 after decoding: a wrong charset garbles every row alike, so failing the page
// withholds its page set instead of publishing garbage names or rejecting its rows one by one.
func checkDecoded(st *site.Site, rows []site.RawRow, d decoding) error {
	for i := range rows {
		for _, c := range st.RowCells(&rows[i]) {
			if v := *c.Dst; strings.ContainsRune(v, utf8.RuneError) || !utf8.ValidString(v) {
				hint := "declare the site's charset (charset: euc-kr) if it is mislabelled"
				if d.By == "site" {
					hint = "the site's charset key is wrong"
				}
				return fmt.Errorf("%w: row %d's %s %q holds U+FFFD after decoding as %s; %s",
					ErrUndecodable, i+1, c.Name, truncate(strings.ToValidUTF8(v, "\ufffd"), 64), d, hint)
			}
		}
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
