package suggest

import "testing"

// TestCorpusHandWritten: every shape of the corpus's second round has a hand-written entry
// (corpusShape.hand) whose crawl of the simulated week is exactly the shape's ground truth. It
// proves the shape's truth can be crawled with the sites language as it is (so "right with one
// example row" is a target suggest can meet), and shows the suggest work what a right entry
// looks like.
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
			text := r.handText()
			if problem := checkProblem(t, []byte(text), noEnv); problem != "" {
				t.Errorf("crawler check of the hand-written entry: %s", problem)
			}
			per := crawlWeekEvents(t, r.clock, noEnv, siteOf(t, text, "hand", r.base))
			sameAsTruth(t, sh, per[0], truthEvents(t, r.sim, sh, crawlTimes()))
		})
	}
}
