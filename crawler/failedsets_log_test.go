package crawler

import (
	"strings"
	"testing"

	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// A crawl whose failed pages all belong to page sets closes what the other sets lost: its log says
// that in one line (not also "no listing closes on its evidence"), and names the failed sets in
// snake_case like every other key.
func TestFailedPageSetsLogOneLine(t *testing.T) {
	t.Parallel()
	cs := newClubSite(t, map[string]int{"137": 3, "138": 3})
	logs := &testkit.SyncBuffer{}
	cr := newClubRun(t, cs.site, logs)
	if s := cr.run(t); !s.Complete {
		t.Fatalf("first crawl: %+v", s)
	}
	cs.set("138", "maintenance")
	if s := cr.run(t); s.Complete || len(s.FailedSets) == 0 {
		t.Fatalf("crawl with club 138 in maintenance: %+v", s)
	}
	var incomplete []string
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "crawl incomplete") || strings.Contains(line, "closes withheld") {
			incomplete = append(incomplete, line)
		}
	}
	if len(incomplete) != 1 {
		t.Fatalf("%d lines about the incomplete crawl, want 1:\n%s", len(incomplete), strings.Join(incomplete, "\n"))
	}
	line := incomplete[0]
	if strings.Contains(line, "no listing closes") || !strings.Contains(line, "failed_sets=") ||
		!strings.Contains(line, "course:클럽138 CC") || strings.Contains(line, "Course") || strings.Contains(line, "PlayDate") {
		t.Errorf("the line does not say that closes are withheld for the failed sets only, in snake_case:\n%s", line)
	}
}
