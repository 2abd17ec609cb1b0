package dashboard

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// /static/ serves the named assets and nothing else: no template through an encoded "..", no
// directory listing (the URLs sent as they are over HTTP, not cleaned by a client).
func TestStaticServesOnlyTheAssets(t *testing.T) {
	srv := httptest.NewServer(newTestHandler(t, storetest.NewDB(t), nil))
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		path string
		want int
	}{
		{"/static/style.css", http.StatusOK},
		{"/static/%2e%2e/templates/layout.html", http.StatusNotFound},
		{"/static/..%2ftemplates%2flayout.html", http.StatusNotFound},
		{"/static/%2e%2e/", http.StatusNotFound},
		{"/static/", http.StatusNotFound},
		{"/static", http.StatusNotFound},
		{"/static/templates/layout.html", http.StatusNotFound},
		{"/static/static/style.css", http.StatusNotFound},
		{"/static/style.css/", http.StatusNotFound},
		{"/static/nope.css", http.StatusNotFound},
		{"/templates/layout.html", http.StatusNotFound},
	} {
		code, body := testkit.Get(t, srv.URL+tc.path)
		if code != tc.want {
			t.Errorf("GET %s: %d, want %d", tc.path, code, tc.want)
		}
		if strings.Contains(body, "{{") || strings.Contains(body, `<a href="templates/">`) || strings.Contains(body, `<a href="static/">`) {
			t.Errorf("GET %s: a template or a directory listing (%d bytes):\n%s", tc.path, len(body), testkit.Tail(body, 3))
		}
	}
	resp, err := http.Get(srv.URL + "/static/style.css")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/css") {
		t.Errorf("style.css served as %q", ct)
	}
}

// A filter with invalid UTF-8 or a NUL is the client's mistake: 400 saying which parameter is
// wrong, never a 500 with an ERROR line anyone could write at will.
func TestInvalidTextInFiltersIs400WithoutAnErrorLog(t *testing.T) {
	pool := storetest.NewDB(t)
	ingest(t, store.New(pool), hostileEvents()) // with data: /listings runs its queries
	var logs testkit.SyncBuffer
	h := newTestHandler(t, pool, func(c *Config) { c.Logger = slog.New(slog.NewJSONHandler(&logs, nil)) })
	getContains(t, h, http.StatusBadRequest, map[string]string{
		"/listings?source=%ff%fe":       "source is not valid UTF-8",
		"/listings?source=a%00b":        "source contains a NUL character",
		"/listings?course=%00":          "course contains a NUL character",
		"/listings?course=%c3%28":       "course is not valid UTF-8",
		"/listings.csv?course=%ff":      "course is not valid UTF-8",
		"/listings.csv?source=%00":      "source contains a NUL character",
		"/listing?key=%00":              "key contains a NUL character",
		"/listing?key=%ff":              "key is not valid UTF-8",
		"/listing?key=golf%7C%ed%a0%80": "key is not valid UTF-8",
	})
	if s := logs.String(); strings.Contains(s, `"level":"ERROR"`) {
		t.Errorf("ERROR lines for a client's bad filter:\n%s", s)
	}
}
