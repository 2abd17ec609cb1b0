package suggest

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// loginPage is a login form found in an answer.
type loginPage struct {
	action   string            // absolute URL the form posts to
	fields   map[string]string // its fields: templates over the credentials, hidden values as they are
	selector string            // how to recognise the page
}

// loginForm finds a form with a password field in an HTML answer.
func loginForm(body []byte, pageURL string) (loginPage, bool) {
	if len(body) == 0 || !bytes.Contains(bytes.ToLower(body), []byte("password")) {
		return loginPage{}, false
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return loginPage{}, false
	}
	pw := doc.Find(`input[type=password]`).First()
	if pw.Length() == 0 {
		return loginPage{}, false
	}
	form := pw.Closest("form")
	lp := loginPage{fields: map[string]string{}, selector: "input[type=password]"}
	if id := form.AttrOr("id", ""); id != "" && !strings.ContainsAny(id, " .#:[]") {
		lp.selector = "form#" + id
	}
	base, _ := url.Parse(pageURL)
	action := form.AttrOr("action", "")
	if u, err := url.Parse(action); err == nil && base != nil {
		lp.action = base.ResolveReference(u).String()
	} else {
		lp.action = pageURL
	}
	user := false
	form.Find("input[name]").Each(func(_ int, in *goquery.Selection) {
		name := in.AttrOr("name", "")
		switch strings.ToLower(in.AttrOr("type", "text")) {
		case "password":
			lp.fields[name] = "{{.Credentials.password}}"
		case "hidden":
			lp.fields[name] = literal(in.AttrOr("value", ""))
		case "text", "email", "tel", "":
			if !user {
				lp.fields[name] = "{{.Credentials.user}}"
				user = true
			}
		}
	})
	return lp, true
}

var reNotEnv = regexp.MustCompile(`[^A-Z0-9]+`)

// setLogin writes the login block to fill in: the credentials are read from two environment
// variables named after the site.
func (a *analysis) setLogin(lp loginPage, why string) {
	a.login = true
	prefix := a.envPrefix()
	creds := map[string]string{"password": prefix + "_PASSWORD"}
	for _, v := range lp.fields {
		if strings.Contains(v, ".Credentials.user") {
			creds["user"] = prefix + "_USER"
		}
	}
	a.out.Login = &site.Login{URL: lp.action, Form: lp.fields, Credentials: creds,
		Page: site.LoginPage{Selector: lp.selector, Statuses: []int{401, 403}}}
	names := sortedKeys(lp.fields)
	a.say("login: %s; the login block posts %s to %s and recognises the page by %s", why, strings.Join(names, ", "), lp.action, lp.selector)
	a.say("login: to fill in: set %s before crawling (the sites file names the variables, never the secrets); with them set, suggest logs in itself", strings.Join(sortedValues(creds), " and "))
}

// envPrefix is the site's name as the first words of its environment variables (MY_CLUB).
func (a *analysis) envPrefix() string {
	prefix := strings.Trim(reNotEnv.ReplaceAllString(strings.ToUpper(a.out.Name), "_"), "_")
	if prefix == "" || (prefix[0] >= '0' && prefix[0] <= '9') {
		prefix = "SITE_" + prefix
	}
	return prefix
}

func sortedValues(m map[string]string) []string {
	var out []string
	for _, k := range sortedKeys(m) {
		out = append(out, m[k])
	}
	return out
}

// loggedIn fetches the page again after the login block's login when its credential variables
// are set (the second run, after the golfer set them): the rows are then behind it.
func (a *analysis) loggedIn(ctx context.Context) (Page, bool, error) {
	l := a.out.Login
	getenv := a.o.Fetcher.getenv()
	for _, env := range sortedValues(l.Credentials) {
		if getenv(env) == "" {
			return Page{}, false, nil
		}
	}
	page, err := a.o.Fetcher.FetchLoggedIn(ctx, a.t.req, a.t.target, a.date, l)
	if err != nil {
		return Page{}, false, err
	}
	if page.Err != nil {
		a.say("login: with %s set the login or the page failed: %v", strings.Join(sortedValues(l.Credentials), " and "), page.Err)
		return Page{}, false, nil
	}
	a.say("login: %s are set: logged in and fetched the page again (status %d, %d bytes)", strings.Join(sortedValues(l.Credentials), " and "), page.Status, len(page.Body))
	a.loginDone = true
	return page, true, nil
}

var reUserName = regexp.MustCompile(`(?i)(user|login|member|^mb_?id$|^id$|usrid|userid)`)

// passwordLogin turns the copied request's password fields into the login block to fill in: they
// post {{.Credentials.password}} (and a user-like field {{.Credentials.user}}) to the page's URL,
// never the copied values. Where the site's login form is another page, its URL is to be set.
func (a *analysis) passwordLogin() {
	fields := map[string]string{}
	for _, name := range a.t.passwords {
		fields[name] = "{{.Credentials.password}}"
	}
	for name := range a.t.req.Form {
		if reUserName.MatchString(name) && !isSecretName(name) {
			fields[name] = "{{.Credentials.user}}"
			break
		}
	}
	a.setLogin(loginPage{action: redactURL(a.o.Request.URL), fields: fields, selector: "input[type=password]"},
		fmt.Sprintf("the copied request sends a password (form %s): it is never written; the login block sends it from a variable "+
			"(check its url: the site's login form may post elsewhere)", strings.Join(a.t.passwords, ", ")))
}
