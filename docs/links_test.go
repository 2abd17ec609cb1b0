// Package docs holds the reference pages the README links to. Its test checks that every relative
// link and #anchor of the README, CONTRIBUTING.md and docs/*.md resolves, with GitHub's rules for a
// heading's anchor, so a moved section or a renamed heading cannot leave a dead link behind.
package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// The pages whose links are checked, relative to the repository root.
func checkedPages(t *testing.T) []string {
	t.Helper()
	pages := []string{"README.md", "CONTRIBUTING.md"}
	more, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range more {
		rel, err := filepath.Rel("..", p)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, filepath.ToSlash(rel))
	}
	sort.Strings(pages)
	return pages
}

func TestEveryLinkResolves(t *testing.T) {
	pages := checkedPages(t)
	if len(pages) < 3 {
		t.Fatalf("found only %v", pages)
	}
	var dead []string
	for _, page := range pages {
		dead = append(dead, deadLinks(dirFS{root: ".."}, page)...)
	}
	if len(dead) > 0 {
		t.Fatalf("%d dead link(s):\n%s", len(dead), strings.Join(dead, "\n"))
	}
}

// The checker finds what it is there to find: a missing file, a missing anchor in another page and
// in the same page; and it accepts GitHub's slugs, numbered duplicates and links in code as text.
func TestDeadLinksFindsDeadLinks(t *testing.T) {
	fsys := mapFS{
		"a.md": "# Top\n\n## Storage and `booking_lifetimes`\n\n## Top\n\n" +
			"[ok](#storage-and-booking_lifetimes) [ok](#top-1) [ok](b/c.md#central-notifier-booking-consumer-notify)\n" +
			"[ok](b/) `[code](nowhere.md)` ![img](b/c.md)\n" +
			"```\n[fenced](nowhere.md)\n```\n" +
			"[dead file](missing.md) [dead anchor](#nope) [dead there](b/c.md#nope) [ok](https://example.com/x)\n",
		"b/c.md": "# C\n\n### Central notifier (`booking-consumer notify`)\n",
	}
	got := deadLinks(fsys, "a.md")
	want := []string{
		"a.md:12: missing.md: no such file",
		"a.md:12: #nope: no such anchor in a.md",
		"a.md:12: b/c.md#nope: no such anchor in b/c.md",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("deadLinks:\n got %q\nwant %q", got, want)
	}
}

func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Just the alerts":                                                         "just-the-alerts",
		"Event contract (schema_version 1)":                                       "event-contract-schema_version-1",
		"Storage and `booking_lifetimes`":                                         "storage-and-booking_lifetimes",
		"Reliability: what is guaranteed, what is not":                            "reliability-what-is-guaranteed-what-is-not",
		"Crawl runs: sites in parallel, politeness per host, a deadline per site": "crawl-runs-sites-in-parallel-politeness-per-host-a-deadline-per-site",
		"Tests, benchmarks, fuzzing":                                              "tests-benchmarks-fuzzing",
		"play_date from a year-less round_date":                                   "play_date-from-a-year-less-round_date",
		"See [the page](x.md) now":                                                "see-the-page-now",
		"티타임 알림":                                                                  "티타임-알림",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
}

type mapFS map[string]string

func (m mapFS) read(name string) ([]byte, bool) {
	s, ok := m[name]
	return []byte(s), ok
}

func (m mapFS) exists(name string) bool {
	if _, ok := m[name]; ok {
		return true
	}
	for k := range m {
		if strings.HasPrefix(k, strings.TrimSuffix(name, "/")+"/") {
			return true
		}
	}
	return false
}

// pageFS is what the checker reads: the repository (dirFS) or, in its own test, a mapFS.
type pageFS interface {
	read(name string) ([]byte, bool)
	exists(name string) bool
}

type dirFS struct{ root string }

func (d dirFS) read(name string) ([]byte, bool) {
	b, err := os.ReadFile(filepath.Join(d.root, filepath.FromSlash(name)))
	return b, err == nil
}

func (d dirFS) exists(name string) bool {
	_, err := os.Stat(filepath.Join(d.root, filepath.FromSlash(name)))
	return err == nil
}

var (
	linkRe     = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	codeSpanRe = regexp.MustCompile("`+[^`]*`+")
	headingRe  = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	htmlIDRe   = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	schemeRe   = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// deadLinks lists page's relative links (outside code) whose file or anchor does not exist, as
// "page:line: target: why".
func deadLinks(f pageFS, page string) []string {
	body, ok := f.read(page)
	if !ok {
		return []string{page + ": cannot read"}
	}
	var dead []string
	for i, line := range proseLines(string(body)) {
		for _, m := range linkRe.FindAllStringSubmatch(line, -1) {
			target := m[1]
			if schemeRe.MatchString(target) {
				continue // https:, mailto:
			}
			file, anchor, _ := strings.Cut(target, "#")
			resolved := page
			if file != "" {
				resolved = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(page), file)))
				if strings.HasPrefix(resolved, "../") || !f.exists(resolved) {
					dead = append(dead, fmt.Sprintf("%s:%d: %s: no such file", page, i+1, target))
					continue
				}
			}
			if anchor == "" {
				continue
			}
			b, ok := f.read(resolved)
			if !ok || !anchors(string(b))[anchor] {
				dead = append(dead, fmt.Sprintf("%s:%d: %s: no such anchor in %s", page, i+1, target, resolved))
			}
		}
	}
	return dead
}

// proseLines is body's lines with fenced code blocks and inline code spans blanked, so that a link
// shown as code is not checked; line numbers stay those of the file.
func proseLines(body string) []string {
	lines := strings.Split(body, "\n")
	fence := ""
	for i, l := range lines {
		trimmed := strings.TrimSpace(l)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			lines[i] = ""
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			lines[i] = ""
			continue
		}
		lines[i] = codeSpanRe.ReplaceAllString(l, "")
	}
	return lines
}

// anchors is the set of anchors a page has on GitHub: each heading's slug (a repeated slug gets
// -1, -2, ... in order) and every <a id=...> or <a name=...>.
func anchors(body string) map[string]bool {
	set := map[string]bool{}
	seen := map[string]int{}
	fence := ""
	for _, l := range strings.Split(body, "\n") {
		trimmed := strings.TrimSpace(l)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		for _, m := range htmlIDRe.FindAllStringSubmatch(l, -1) {
			set[m[1]] = true
		}
		m := headingRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		s := slug(m[1])
		if n := seen[s]; n > 0 {
			set[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			set[s] = true
		}
		seen[s]++
	}
	return set
}

var inlineLinkRe = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)

// slug is GitHub's anchor for a heading: the text as rendered (a link's text, code without its
// backticks), lower-cased, every character other than a letter, a digit, a space, '-' or '_'
// dropped, and each space turned into '-'.
func slug(heading string) string {
	text := inlineLinkRe.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
