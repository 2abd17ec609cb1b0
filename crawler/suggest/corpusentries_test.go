package suggest

import (
	"slices"
	"testing"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
)

// TestCorpusEntriesCrawlTheTruth: every hand-written entry of the simulator's corpus
// (sitesim.CorpusYAML, the reference the suggestions of the other tests are held to) crawls a
// simulated week as the ground truth says, as TestSuggestCorpus holds the suggestions: every tee
// time of the clubs its targets name (every club without targets) opened once, booked ones closed
// as booked, price drops as changes (the players too where it maps them), nothing else. A new
// shape's entry in corpus.yaml is crawled here with no edit.
func TestCorpusEntriesCrawlTheTruth(t *testing.T) {
	t.Parallel()
	specs, err := site.ParseSpecs(sitesim.CorpusYAML)
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range specs {
		t.Run(spec.Name, func(t *testing.T) {
			t.Parallel()
			clock := &simClock{t: simStart}
			sim, srv := simServer(t, clock)
			st := corpusSite(t, spec.Name, srv.URL)
			players := st.Fields["players"]
			sh := corpusShape{players: players.Configured() || players.Path != ""}
			for _, tg := range st.Targets {
				i := slices.IndexFunc(sim.Clubs(), func(c sitesim.Club) bool { return c.Name == tg["name"] })
				if i < 0 {
					t.Fatalf("target %v names no club of the simulator", tg)
				}
				sh.clubs = append(sh.clubs, i)
			}
			got := crawlWeekEvents(t, clock, noEnv, st)[0]
			sameAsTruth(t, got, truthEvents(t, sim, sh, crawlTimes()))
		})
	}
}
