package alerts_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoImportCycleAndNoColly: the engine (notify) imports neither the chat nor the service, the
// chat (notify/chat) not the service, and none of the three links the crawler's fetching half
// (package crawler, colly): the price parser comes from the site model (crawler/site). `go list
// -deps` shows what each links.
func TestNoImportCycleAndNoColly(t *testing.T) {
	t.Parallel()
	const mod = "github.com/golfcrawler/golf-crawler/"
	for pkg, banned := range map[string][]string{
		"cmd/internal/notify":      {mod + "cmd/internal/notify/chat", mod + "cmd/internal/alerts", mod + "crawler", "github.com/gocolly/colly"},
		"cmd/internal/notify/chat": {mod + "cmd/internal/alerts", mod + "crawler", "github.com/gocolly/colly"},
		"cmd/internal/alerts":      {mod + "crawler", "github.com/gocolly/colly", "github.com/jackc/pgx/v5", "modernc.org/sqlite"},
	} {
		out, err := exec.Command("go", "list", "-deps", mod+pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, b := range banned {
				if dep == b || strings.HasPrefix(dep, b+"/") && b != mod+"crawler" {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}
