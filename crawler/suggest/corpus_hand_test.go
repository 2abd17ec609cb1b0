package suggest

import (
	"slices"
	"testing"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
)

// TestCorpusHandWritten: every shape of the corpus with a hand-written entry (corpusShape.hand,
// an entry of the simulator's corpus file, crawler/sitesim/corpus.yaml) crawls the simulated week
// exactly as the shape's ground truth says, under the shape's configuration. It proves the shape's
// truth can be crawled with the sites language as it is (so "right with one example row" is a
// target suggest can meet), and shows the suggest work what a right entry looks like.
func TestCorpusHandWritten(t *testing.T) {
	day := simStart.AddDate(0, 0, 1)
	for _, sh := range corpusShapes() {
		if sh.hand == "" {
			continue
		}
		names, forms := sh.forms()
		t.Run(sh.name, func(t *testing.T) {
			t.Parallel()
			r := newCorpusRun(t, sh, day, forms[names[0]], &crawlCache{})
			if problem := checkProblem(t, []byte("sites:\n"+sitesim.CorpusEntry(sh.hand, r.base)), noEnv); problem != "" {
				t.Errorf("crawler check of the hand-written entry %s: %s", sh.hand, problem)
			}
			per := crawlWeekEvents(t, r.clock, noEnv, corpusSite(t, sh.hand, r.base))
			sameAsTruth(t, sh, per[0], truthEvents(t, r.sim, sh, crawlTimes()))
		})
	}
}

// Every entry of the simulator's corpus file is the hand-written entry of a corpus shape, so that
// TestCorpusHandWritten crawls it against that shape's ground truth: an entry no shape names would
// be a reference nothing checks.
func TestCorpusEntriesAreHandWritten(t *testing.T) {
	t.Parallel()
	specs, err := site.ParseSpecs(sitesim.CorpusYAML)
	if err != nil {
		t.Fatal(err)
	}
	var hands []string
	for _, sh := range corpusShapes() {
		hands = append(hands, sh.hand)
	}
	// Entries no corpus shape names yet, each crawled against the simulator's ground truth over a
	// week by crawler's TestLangShapesWeek.
	elsewhere := []string{"lang-csrf-json"}
	for _, spec := range specs {
		if !slices.Contains(hands, spec.Name) && !slices.Contains(elsewhere, spec.Name) {
			t.Errorf("corpus.yaml's %s is no corpus shape's hand-written entry (corpusShape.hand): nothing crawls it against a ground truth", spec.Name)
		}
	}
}
