package site

import (
	"cmp"
	"fmt"
	"os"
)

// SiteCheck is the outcome of compiling one site of a sites file (CheckSites).
type SiteCheck struct {
	Name string // the site's name as written
	Site *Site  // compiled when Err is nil
	Err  error  // why the site is not usable
	// MissingEnv are the login's credential variables that getenv does not set (and that have
	// no dev_defaults), and the env block's: the site is valid, but its crawl would fail here.
	MissingEnv []string
	// Warnings are the site's weak points (Site.Warnings).
	Warnings []string
}

// CheckSites compiles every site of a sites file without fetching anything, like LoadSites, but
// does not stop at the first invalid site: selectors compile, gjson paths parse, templates execute
// for a sample date and every target, and course, round_date and tee_time are mapped. The error is
// for a file that cannot be read or parsed at all.
func CheckSites(path string, getenv func(string) string) ([]SiteCheck, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read sites file: %w", err)
	}
	specs, err := ParseSpecs(b)
	if err != nil {
		return nil, fmt.Errorf("sites file %s: %w", path, err)
	}
	seen := map[string]bool{}
	out := make([]SiteCheck, 0, len(specs))
	for i, spec := range specs {
		c := SiteCheck{Name: spec.Name}
		c.Site, c.Err = spec.Compile()
		if c.Err != nil {
			c.Err = withLine(b, i, spec.Name, c.Err)
		}
		if c.Err == nil && seen[spec.Name] {
			c.Err = fmt.Errorf("site name %q is used twice; names are event sources and must be unique", spec.Name)
		}
		seen[spec.Name] = true
		if c.Err == nil {
			c.Warnings = c.Site.Warnings()
		}
		if l := spec.Login; c.Err == nil && l != nil {
			for _, name := range sortedKeys(l.Credentials) {
				if env := l.Credentials[name]; getenv(env) == "" && l.DevDefaults[name] == "" {
					c.MissingEnv = append(c.MissingEnv, env)
				}
			}
		}
		for _, name := range sortedKeys(spec.Env) {
			if env := spec.Env[name]; c.Err == nil && getenv(env) == "" {
				c.MissingEnv = append(c.MissingEnv, env)
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

// Describe is a one-line summary of a valid site for `crawler check`: its shape, how many
// requests one crawl sends before following links, and the answers it reads as no listings.
func (s *Site) Describe() string {
	d := s.describeShape()
	if s.NotOpen != nil || (s.JSON != nil && len(s.JSON.NotOpenWhen) > 0) {
		d += ", a date not open yet (not_open) opens and closes nothing"
	}
	if len(s.EmptyWhen) > 0 {
		d += fmt.Sprintf(", %d empty_when marker(s) make a sold-out page", len(s.EmptyWhen))
	}
	return d
}

func (s *Site) describeShape() string {
	switch {
	case len(s.Requests) > 0:
		targets := max(1, len(s.Targets))
		rows, captures := 0, 0
		for _, rt := range s.Requests {
			if len(rt.Capture) > 0 {
				captures++
			} else {
				rows++
			}
		}
		d := fmt.Sprintf("%s, %d request(s) x %d target(s) x %d day(s) = %d requests a crawl", s.Format, rows, targets,
			s.DaysAhead+1, rows*targets*(s.DaysAhead+1))
		if captures > 0 {
			d += fmt.Sprintf(", after %d capturing request(s) (each distinct one once a crawl)", captures)
		}
		if s.Login != nil {
			d += ", login " + s.Login.URL
		}
		return d
	case s.URLTemplate != "":
		return fmt.Sprintf("%s, url_template x %d day(s)", s.Format, s.DaysAhead+1)
	}
	return fmt.Sprintf("%s, %d start URL(s)", s.Format, len(s.StartURLs))
}

// Secrets returns the values of the site's login credentials and env block as getenv reads them,
// for callers that print what a crawl saw (`crawler try`) and must redact them.
func (s *Site) Secrets(getenv func(string) string) []string {
	var out []string
	for _, env := range s.Env {
		if v := getenv(env); v != "" {
			out = append(out, v)
		}
	}
	if s.Login == nil {
		return out
	}
	for name, env := range s.Login.Credentials {
		if v := cmp.Or(getenv(env), s.Login.DevDefaults[name]); v != "" {
			out = append(out, v)
		}
	}
	return out
}
