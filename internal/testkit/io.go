package testkit

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/schema"
)

// DecodeEvents decodes every line of r, JSON lines of events (crawler --events-out, the practice
// set, an export); every line must be a valid event that validates against its JSON Schema
// (events/schema), else t fails naming the line.
func DecodeEvents(t testing.TB, r io.Reader) []events.Event {
	t.Helper()
	var out []events.Event
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		e, err := events.Decode(sc.Bytes())
		if err != nil {
			t.Fatalf("events line %d: %v", len(out)+1, err)
		}
		if err := schema.Validate(sc.Bytes()); err != nil {
			t.Fatalf("events line %d: %v", len(out)+1, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// ReadEvents is DecodeEvents of the file at path.
func ReadEvents(t testing.TB, path string) []events.Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return DecodeEvents(t, f)
}

// Get fetches url with http.DefaultClient; see Do.
func Get(t testing.TB, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return Do(t, http.DefaultClient, req)
}

// Do sends req with c and returns the status code and the whole body; a failed request fails t.
func Do(t testing.TB, c *http.Client, req *http.Request) (int, string) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// WriteTemp writes content to a file called name in a new temporary directory of t (removed when
// the test ends) and returns its path.
func WriteTemp(t testing.TB, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
