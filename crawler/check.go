package crawler

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"

	"gopkg.in/yaml.v3"
)

// SiteCheck is the outcome of validating one site of a sites file (CheckSites).
type SiteCheck struct {
	Site Site  // validated and with defaults filled when Err is nil
	Err  error // why the site is not usable
	// MissingEnv are the login's credential variables that getenv does not set (and that have
	// no dev_defaults): the site is valid, but its crawl would fail here.
	MissingEnv []string
	// Warnings are the site's weak points (Site.Warnings).
	Warnings []string
}

// CheckSites validates every site of a sites file without fetching anything, like LoadSites, but
// does not stop at the first invalid site: selectors compile, gjson paths parse, templates execute
// for a sample date and every target, and course, round_date and tee_time are mapped. The error is
// for a file that cannot be read or parsed at all.
func CheckSites(path string, getenv func(string) string) ([]SiteCheck, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read sites file: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var f sitesFile
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("sites file %s is empty; it must list at least one site under \"sites\"", path)
		}
		return nil, fmt.Errorf("sites file %s: parse YAML: %w", path, err)
	}
	if len(f.Sites) == 0 {
		return nil, fmt.Errorf("sites file %s: no sites are listed under \"sites\"", path)
	}
	seen := map[string]bool{}
	out := make([]SiteCheck, 0, len(f.Sites))
	for _, s := range f.Sites {
		c := SiteCheck{Site: s}
		c.Err = c.Site.Validate()
		if c.Err == nil && seen[s.Name] {
			c.Err = fmt.Errorf("site name %q is used twice; names are event sources and must be unique", s.Name)
		}
		seen[s.Name] = true
		if c.Err == nil {
			c.Warnings = c.Site.Warnings()
		}
		if c.Err == nil && s.Login != nil {
			for _, name := range sortedKeys(s.Login.Credentials) {
				if env := s.Login.Credentials[name]; getenv(env) == "" && s.Login.DevDefaults[name] == "" {
					c.MissingEnv = append(c.MissingEnv, env)
				}
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// Warnings are what `crawler check` warns about in a valid site: an HTML site whose list selector
// cannot be derived from its row selector (a page without rows is then judged only by the holder
// remembered from the last page with rows), and a JSON site whose empty_when has an is condition
// but no success (it then holds only where its path is present).
func (s *Site) Warnings() []string {
	var out []string
	if s.Format != FormatJSON && s.list == "" {
		out = append(out, fmt.Sprintf("no list selector can be derived from row %q: a page without rows counts as sold out "+
			"only if it shows the element that held the rows on the site's last page with rows (remembered in the snapshot; "+
			"until then it is not checked); set list: to the selector of that element", s.Row))
	}
	if s.Format == FormatJSON && s.JSON.Success == nil {
		for _, c := range s.JSON.EmptyWhen {
			if c.Is != "" {
				out = append(out, fmt.Sprintf("empty_when %q without success: it holds only where %s is present, so an error answer "+
					"without it fails the page; add success: (what every good answer has) to judge the rest", c.String(), c.Path))
			}
		}
	}
	return out
}

// Describe is a one-line summary of a valid site for `crawler check`: its shape and how many
// requests one crawl sends before following links.
func (s *Site) Describe() string {
	switch {
	case len(s.Requests) > 0:
		targets := max(1, len(s.Targets))
		d := fmt.Sprintf("%s, %d request(s) x %d target(s) x %d day(s) = %d requests a crawl", s.Format, len(s.Requests), targets,
			s.DaysAhead+1, len(s.Requests)*targets*(s.DaysAhead+1))
		if s.Login != nil {
			d += ", login " + s.Login.URL
		}
		return d
	case s.URLTemplate != "":
		return fmt.Sprintf("%s, url_template x %d day(s)", s.Format, s.DaysAhead+1)
	}
	return fmt.Sprintf("%s, %d start URL(s)", s.Format, len(s.StartURLs))
}

// Secrets returns the values of the site's login credentials as getenv reads them, for callers
// that print what a crawl saw (`crawler try`) and must redact them.
func (s *Site) Secrets(getenv func(string) string) []string {
	if s.Login == nil {
		return nil
	}
	var out []string
	for name, env := range s.Login.Credentials {
		if v := cmp.Or(getenv(env), s.Login.DevDefaults[name]); v != "" {
			out = append(out, v)
		}
	}
	return out
}
