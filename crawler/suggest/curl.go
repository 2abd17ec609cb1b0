package suggest

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Request is one HTTP request as the browser sent it: what "Copy as cURL" holds.
type Request struct {
	Method string
	URL    string
	Header http.Header // canonical names; Cookie holds -b/--cookie too
	Body   string
	user   string // -u's user:password, made the Basic header in finish
}

// ErrCurl marks text that is not a curl command line this parser reads.
var ErrCurl = errors.New("not a curl command")

// curl options that take a value (long and short spellings); every other option is a switch.
var curlValueOpts = map[string]string{
	"-X": "request", "--request": "request",
	"-H": "header", "--header": "header",
	"-b": "cookie", "--cookie": "cookie",
	"-d": "data", "--data": "data", "--data-raw": "data", "--data-binary": "data", "--data-ascii": "data",
	"--data-urlencode": "data-urlencode",
	"-A":               "agent", "--user-agent": "agent",
	"-e": "referer", "--referer": "referer",
	"-u": "user", "--user": "user",
	"--url": "url",
	"-o":    "ignore", "--output": "ignore", "-m": "ignore", "--max-time": "ignore",
	"--connect-timeout": "ignore", "-x": "ignore", "--proxy": "ignore", "--cacert": "ignore",
}

// ParseCurl reads a "Copy as cURL" command line, Chrome's or Firefox's bash format: single, double
// and $'...' quoting, backslash-newline continuations, -X, -H (any case of the name), -b/--cookie,
// -d/--data/--data-raw/--data-binary (several are joined with &, as curl does), -G, --url. A body
// without -X means POST, as in curl.
func ParseCurl(text string) (Request, error) {
	words, err := shellWords(text)
	if err != nil {
		return Request{}, fmt.Errorf("%w: %v", ErrCurl, err)
	}
	if len(words) == 0 || words[0] != "curl" {
		return Request{}, fmt.Errorf("%w: it must start with curl", ErrCurl)
	}
	r := Request{Header: http.Header{}}
	var data []string
	get := false
	for i := 1; i < len(words); i++ {
		w := words[i]
		if !strings.HasPrefix(w, "-") || w == "-" {
			if r.URL != "" {
				return Request{}, fmt.Errorf("%w: two URLs, %q and %q", ErrCurl, r.URL, w)
			}
			r.URL = w
			continue
		}
		name, val, attached := splitOpt(w)
		kind, takes := curlValueOpts[name]
		if !takes {
			if name == "-G" || name == "--get" {
				get = true
			}
			continue // --compressed, -k, -L, -s, --http2, ...: no effect on what is asked
		}
		if !attached {
			if i+1 >= len(words) {
				return Request{}, fmt.Errorf("%w: %s needs a value", ErrCurl, name)
			}
			i++
			val = words[i]
		}
		if err := r.apply(kind, val, &data); err != nil {
			return Request{}, err
		}
	}
	return r.finish(data, get)
}

// splitOpt splits "--opt=value" and "-Xvalue" into the option and its attached value.
func splitOpt(w string) (name, val string, attached bool) {
	if strings.HasPrefix(w, "--") {
		if n, v, ok := strings.Cut(w, "="); ok {
			if _, known := curlValueOpts[n]; known {
				return n, v, true
			}
		}
		return w, "", false
	}
	if len(w) > 2 {
		if _, known := curlValueOpts[w[:2]]; known {
			return w[:2], w[2:], true
		}
	}
	return w, "", false
}

func (r *Request) apply(kind, val string, data *[]string) error {
	switch kind {
	case "request":
		r.Method = strings.ToUpper(val)
	case "header":
		name, v, ok := strings.Cut(val, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return fmt.Errorf("%w: header %q has no name: value", ErrCurl, val)
		}
		r.Header.Add(strings.TrimSpace(name), strings.TrimSpace(v))
	case "cookie":
		if strings.Contains(val, "=") {
			r.Header.Add("Cookie", val)
		} // else a cookie file name: nothing to send
	case "data":
		*data = append(*data, val)
	case "data-urlencode":
		*data = append(*data, urlencodeData(val))
	case "agent":
		r.Header.Set("User-Agent", val)
	case "referer":
		r.Header.Set("Referer", val)
	case "user":
		r.user = val
	case "url":
		r.URL = val
	}
	return nil
}

// urlencodeData is curl's --data-urlencode: "name=value" sends value encoded.
func urlencodeData(v string) string {
	if name, val, ok := strings.Cut(v, "="); ok {
		return name + "=" + url.QueryEscape(val)
	}
	return url.QueryEscape(v)
}

func (r Request) finish(data []string, get bool) (Request, error) {
	if r.URL == "" {
		return Request{}, fmt.Errorf("%w: no URL", ErrCurl)
	}
	u, err := url.Parse(r.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Request{}, fmt.Errorf("%w: URL %q is not an http(s) URL", ErrCurl, r.URL)
	}
	// curl sends -u (else the URL's user:password) as a Basic header, unless a header gives
	// Authorization; the userinfo never stays in the URL.
	if r.user == "" && u.User != nil {
		r.user = u.User.Username()
		if p, ok := u.User.Password(); ok {
			r.user = u.User.Username() + ":" + p
		}
	}
	if u.User != nil {
		u.User = nil
		r.URL = u.String()
	}
	if r.user != "" && r.Header.Get("Authorization") == "" {
		r.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(r.user)))
	}
	r.user = ""
	body := strings.Join(data, "&")
	switch {
	case get && len(data) > 0:
		if u.RawQuery != "" {
			u.RawQuery += "&"
		}
		u.RawQuery += body
		r.URL, body = u.String(), ""
	case r.Method == "" && len(data) > 0:
		r.Method = http.MethodPost
	}
	if r.Method == "" {
		r.Method = http.MethodGet
	}
	r.Body = body
	return r, nil
}

// shellWords splits a bash command line as bash would: 'single', "double" (with \" \\ \$ \`
// escapes), $'ANSI-C' (\n \t \' \\ \xHH \uHHHH ...), backslash escapes and backslash-newline
// continuations. Variables and substitutions are not expanded; a ^ line ending (Windows cmd) is
// not this format.
func shellWords(s string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool // inside a word
	)
	end := func() {
		if in {
			words = append(words, cur.String())
			cur.Reset()
			in = false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && (s[i+1] == '\n' || (s[i+1] == '\r' && i+2 < len(s) && s[i+2] == '\n')):
			if s[i+1] == '\r' {
				i++
			}
			i++ // a continuation: nothing
		case c == '\\':
			if i+1 < len(s) {
				i++
				cur.WriteByte(s[i])
			}
			in = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			end()
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated '")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case c == '$' && i+1 < len(s) && s[i+1] == '\'':
			n, err := ansiC(s[i+2:], &cur)
			if err != nil {
				return nil, err
			}
			i += 1 + n
			in = true
		case c == '"':
			n, err := doubleQuoted(s[i+1:], &cur)
			if err != nil {
				return nil, err
			}
			i += n
			in = true
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	end()
	return words, nil
}

// doubleQuoted reads s up to and including the closing " into b; it returns the bytes consumed.
func doubleQuoted(s string, b *strings.Builder) (int, error) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return i + 1, nil
		case c == '\\' && i+1 < len(s):
			switch s[i+1] {
			case '"', '\\', '$', '`':
				b.WriteByte(s[i+1])
				i++
			case '\n':
				i++
			default:
				b.WriteByte(c)
			}
		default:
			b.WriteByte(c)
		}
	}
	return 0, errors.New(`unterminated "`)
}

// ansiC reads a $'...' string's contents (s starts after the opening quote) into b; it returns
// the bytes consumed, the closing quote included.
func ansiC(s string, b *strings.Builder) (int, error) {
	simple := map[byte]byte{'n': '\n', 't': '\t', 'r': '\r', 'a': 7, 'b': 8, 'e': 27, 'E': 27, 'f': 12, 'v': 11,
		'\\': '\\', '\'': '\'', '"': '"', '?': '?'}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\'' {
			return i + 1, nil
		}
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		e := s[i]
		if r, ok := simple[e]; ok {
			b.WriteByte(r)
			continue
		}
		width := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
		if width == 0 && e >= '0' && e <= '7' {
			n := 1
			for n < 3 && i+n < len(s) && s[i+n] >= '0' && s[i+n] <= '7' {
				n++
			}
			v, _ := strconv.ParseUint(s[i:i+n], 8, 16)
			b.WriteByte(byte(v))
			i += n - 1
			continue
		}
		if width == 0 {
			b.WriteByte('\\')
			b.WriteByte(e)
			continue
		}
		n := 0
		for n < width && i+1+n < len(s) && isHex(s[i+1+n]) {
			n++
		}
		if n == 0 {
			b.WriteByte('\\')
			b.WriteByte(e)
			continue
		}
		v, _ := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
		if e == 'x' {
			b.WriteByte(byte(v))
		} else {
			b.WriteRune(rune(v))
		}
		i += n
	}
	return 0, errors.New("unterminated $'")
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
