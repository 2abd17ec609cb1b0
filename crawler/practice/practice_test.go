package practice

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/schema"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// TestGenerateDefaults generates the default set and checks its size, that every line decodes and
// validates against its JSON Schema, and that no event id repeats.
func TestGenerateDefaults(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	start := time.Now()
	st, err := Generate(t.Context(), &buf, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("generated %d events (%v) in %d crawls, %d pages, %d rejected rows, in %v",
		st.Events, st.ByType, st.Crawls, st.Pages, st.Rejected, time.Since(start))
	if st.Events < 6500 || st.Events > 7500 {
		t.Errorf("%d events, want 6,500–7,500", st.Events)
	}
	if st.Incomplete != 0 {
		t.Errorf("%d incomplete crawls, want 0 (the site injects no faults)", st.Incomplete)
	}
	if want := int(time.Duration(DefaultDays) * 24 * time.Hour / DefaultInterval); st.Crawls != want {
		t.Errorf("%d crawls, want %d", st.Crawls, want)
	}
	set := slices.Clone(buf.Bytes())
	ids := map[string]bool{}
	sc := bufio.NewScanner(&buf)
	sc.Buffer(nil, 1<<20)
	lines := 0
	var prev time.Time
	for sc.Scan() {
		lines++
		e, err := events.Decode(sc.Bytes())
		if err != nil {
			t.Fatalf("line %d does not decode: %v", lines, err)
		}
		if err := schema.Validate(sc.Bytes()); err != nil {
			t.Fatalf("line %d: %v", lines, err)
		}
		if ids[e.EventID.String()] {
			t.Errorf("line %d repeats event id %s", lines, e.EventID)
		}
		ids[e.EventID.String()] = true
		// Lines come in crawl order. A close is stamped at its first miss, an earlier crawl; every
		// other event at the crawl that emitted it.
		crawlAt, err := time.Parse(time.RFC3339, e.CrawlID[len(DefaultSource)+1:])
		if err != nil || e.CrawlID != crawler.CrawlID(DefaultSource, crawlAt) {
			t.Fatalf("line %d: crawl_id %q: %v", lines, e.CrawlID, err)
		}
		if crawlAt.Before(prev) {
			t.Errorf("line %d: crawl %s before the previous line's %s", lines, crawlAt, prev)
		}
		prev = crawlAt
		if e.OccurredAt.After(crawlAt) || (e.EventType != events.ListingClosed && !e.OccurredAt.Equal(crawlAt)) {
			t.Errorf("line %d: %s occurred_at %s in crawl %q", lines, e.EventType, e.OccurredAt, e.CrawlID)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if lines != st.Events {
		t.Errorf("%d lines, stats say %d events", lines, st.Events)
	}
	// The default set is byte for byte the one users replay: any change to the crawl path that
	// alters it shows here (UPDATE_GOLDENS=1 rewrites the hash when the change is meant).
	testkit.Golden(t, filepath.Join("testdata", "default-set.sha256"),
		fmt.Appendf(nil, "%x  %d bytes, %d events\n", sha256.Sum256(set), len(set), st.Events))
	for _, typ := range []events.Type{events.ListingOpened, events.ListingChanged, events.ListingClosed} {
		if st.ByType[typ] == 0 {
			t.Errorf("no %s events", typ)
		}
	}
}

// TestGenerateDeterministic generates the same short season twice, and once with another seed.
func TestGenerateDeterministic(t *testing.T) {
	t.Parallel()
	gen := func(seed int64) []byte {
		var buf bytes.Buffer
		if _, err := Generate(t.Context(), &buf, Options{Seed: seed, Days: 3}); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	a, b, c := gen(7), gen(7), gen(8)
	if len(a) == 0 {
		t.Fatal("empty set")
	}
	if !bytes.Equal(a, b) {
		t.Errorf("same seed, different bytes: sha256 %x vs %x (%d vs %d bytes)", sha256.Sum256(a), sha256.Sum256(b), len(a), len(b))
	}
	if bytes.Equal(a, c) {
		t.Error("seeds 7 and 8 gave the same set")
	}
}

// The practice site is the simulator's sim-golf (crawler/sitesim/sites.yaml, embedded by sitesim),
// read here from compose/dev/sites.yaml, derived from it: the same selectors and dates, pointed at
// the in-memory host.
func TestSimSiteIsTheDevSitesFileEntry(t *testing.T) {
	t.Parallel()
	got, err := simSite(DefaultInterval)
	if err != nil {
		t.Fatal(err)
	}
	sites, err := site.LoadSites(filepath.Join("..", "..", "compose", "dev", "sites.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := sites[slices.IndexFunc(sites, func(s *site.Site) bool { return s.Name == DefaultSource })]
	if !strings.HasPrefix(got.URLTemplate, "http://"+simHost+"/") || got.AllowedDomains[0] != simHost {
		t.Errorf("the practice site is not pointed at %s: %s %v", simHost, got.URLTemplate, got.AllowedDomains)
	}
	if got.Row != want.Row || got.NextPage != want.NextPage || got.DaysAhead != want.DaysAhead ||
		fmt.Sprint(got.Fields) != fmt.Sprint(want.Fields) {
		t.Errorf("the practice site differs from compose/dev/sites.yaml's %s:\n%+v\n%+v", DefaultSource, got, want)
	}
}
