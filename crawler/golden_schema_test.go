package crawler

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/golfcrawler/golf-crawler/events/schema"
)

// TestGoldenEventsMatchSchemas: every event line of the crawl goldens (testdata/diff.golden)
// validates against its JSON Schema, so the schemas describe what the crawler's diff emits.
func TestGoldenEventsMatchSchemas(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("testdata", "diff.golden"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		if !bytes.HasPrefix(sc.Bytes(), []byte(`{"event_id"`)) {
			continue
		}
		n++
		if err := schema.Validate(sc.Bytes()); err != nil {
			t.Errorf("diff.golden line %d: %v", line, err)
		}
	}
	if n == 0 {
		t.Fatal("diff.golden has no event lines")
	}
	t.Logf("%d events validate", n)
}
