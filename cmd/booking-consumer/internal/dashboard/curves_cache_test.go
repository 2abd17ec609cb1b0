package dashboard

import (
	"net/http"
	"strings"
	"testing"

	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// The overview keeps its time-to-book curves between loads; an ingest in between must show at once
// (a new course gets its panel on the next load, in the same minute of the clock).
func TestOverviewCurvesFollowAnIngest(t *testing.T) {
	pool := storetest.NewDB(t)
	s := store.New(pool)
	ingest(t, s, practiceEvents(t))
	h := newTestHandler(t, pool, nil)
	panels := func() int {
		t.Helper()
		rec := get(t, h, "/")
		if rec.Code != http.StatusOK {
			t.Fatalf("GET / = %d: %s", rec.Code, rec.Body)
		}
		return strings.Count(rec.Body.String(), `<figure class="panel">`)
	}
	before := panels()
	if again := panels(); again != before {
		t.Fatalf("a second load shows %d course panels, the first %d", again, before)
	}
	ingest(t, s, hostileEvents())
	if after := panels(); after != before+1 {
		t.Errorf("after ingesting a listing of a new course the overview shows %d course panels, want %d (the curves went stale)", after, before+1)
	}
}
