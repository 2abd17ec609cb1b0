package crawler

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/golfcrawler/golf-crawler/events"
)

func TestStateRoundTrip(t *testing.T) {
	t.Parallel()
	s := StateDir{Dir: filepath.Join(t.TempDir(), "state")} // Save creates the directory

	empty, err := s.Load(coreTestSource)
	if err != nil {
		t.Fatalf("Load of a source never saved: %v", err)
	}
	if empty.Source != coreTestSource || empty.Listings == nil || len(empty.Listings) != 0 {
		t.Fatalf("Load of a source never saved = %+v, want an empty snapshot", empty)
	}

	noPrice := b0800
	noPrice.PriceKRW, noPrice.Players = nil, nil
	_, snap, _ := Diff(empty, []events.Listing{a0700, noPrice}, crawlAt(t, 1, "2026-11-20 09:00", true), DiffOptions{})
	e := snap.Listings[a0700.Key()]
	e.Misses = 1
	snap.Listings[a0700.Key()] = e
	if err := s.Save(snap); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(coreTestSource)
	if err != nil {
		t.Fatal(err)
	}
	if !got.At.Equal(snap.At) {
		t.Fatalf("At %v, want %v", got.At, snap.At)
	}
	if !got.LastCompleteAt.Equal(snap.LastCompleteAt) || snap.LastCompleteAt.IsZero() {
		t.Fatalf("LastCompleteAt %v, want %v", got.LastCompleteAt, snap.LastCompleteAt)
	}
	got.At, got.LastCompleteAt = snap.At, snap.LastCompleteAt // the zone pointer differs after JSON; the instant is what matters
	for k, e := range got.Listings {
		w := snap.Listings[k]
		if !e.FirstSeen.Equal(w.FirstSeen) {
			t.Fatalf("%s first_seen %v, want %v", k, e.FirstSeen, w.FirstSeen)
		}
		e.FirstSeen = w.FirstSeen
		got.Listings[k] = e
	}
	if !reflect.DeepEqual(got, snap) {
		t.Fatalf("round trip\n got %+v\nwant %+v", got, snap)
	}

	// A second save replaces the first.
	snap.CrawlID = "crawl-2"
	delete(snap.Listings, a0700.Key())
	if err := s.Save(snap); err != nil {
		t.Fatal(err)
	}
	got, err = s.Load(coreTestSource)
	if err != nil || got.CrawlID != "crawl-2" || len(got.Listings) != 1 {
		t.Fatalf("after the second save: %+v, %v", got, err)
	}
	assertNoTempFiles(t, s.Dir)
}

func TestStateSaveIsAtomic(t *testing.T) {
	t.Parallel()
	s := StateDir{Dir: t.TempDir()}
	old := snapOf(seoulTime(t, "2026-11-20 08:00"), 0, a0700)
	old.CrawlID = "old"
	if err := s.Save(old); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(s.Path(coreTestSource))
	if err != nil {
		t.Fatal(err)
	}

	newer := snapOf(seoulTime(t, "2026-11-20 09:00"), 0, a0700, b0800)
	newer.CrawlID = "new"
	boom := errors.New("disk full")
	err = s.save(newer, func(f *os.File, b []byte) error {
		if _, err := f.Write(b[:len(b)/2]); err != nil { // half the file, then fail
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), coreTestSource) {
		t.Fatalf("save error %v, want it to wrap the write error and name the source", err)
	}
	after, err := os.ReadFile(s.Path(coreTestSource))
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Fatal("a failed save changed the snapshot file")
	}
	got, err := s.Load(coreTestSource)
	if err != nil || got.CrawlID != "old" {
		t.Fatalf("Load after a failed save: %+v, %v; want the old snapshot", got, err)
	}
	assertNoTempFiles(t, s.Dir)

	// A temporary file left by a crash (no cleanup ran) is ignored by Load and by the next Save.
	stale := s.Path(coreTestSource) + ".tmp-123"
	if err := os.WriteFile(stale, []byte("{garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Load(coreTestSource); err != nil || got.CrawlID != "old" {
		t.Fatalf("Load with a stale temp file: %+v, %v", got, err)
	}
	if err := s.Save(newer); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Load(coreTestSource); err != nil || got.CrawlID != "new" {
		t.Fatalf("Load after a good save: %+v, %v", got, err)
	}
}

func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.tmp-*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 0 {
		t.Fatalf("temporary files left behind: %v", m)
	}
}

func TestStateCorruptFile(t *testing.T) {
	t.Parallel()
	for name, content := range map[string]string{
		"NotJSON":       "{not json",
		"Truncated":     `{"version":1,"source":"sim-golf","listings":{`,
		"Empty":         "",
		"WrongVersion":  `{"version":3,"source":"sim-golf","crawl_id":"c","at":"2026-11-20T08:00:00+09:00","listings":{}}`,
		"OtherSource":   `{"version":1,"source":"other-site","crawl_id":"c","at":"2026-11-20T08:00:00+09:00","listings":{}}`,
		"UnknownField":  `{"version":1,"source":"sim-golf","surprise":true,"listings":{}}`,
		"TrailingData":  `{"version":1,"source":"sim-golf","listings":{}} {}`,
		"KeyMismatch":   `{"version":1,"source":"sim-golf","listings":{"x":{"listing":{"source":"sim-golf","course_name":"A","round_date":"12/05","play_date":"2026-12-05","tee_time":"07:00","price_krw":null,"players":null},"misses":0,"first_seen":"2026-11-20T08:00:00+09:00"}}}`,
		"WrongJSONType": `{"version":1,"source":"sim-golf","listings":[]}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := StateDir{Dir: t.TempDir()}
			path := s.Path(coreTestSource)
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := s.Load(coreTestSource)
			if !errors.Is(err, ErrCorruptState) {
				t.Fatalf("Load error %v, want ErrCorruptState", err)
			}
			if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, "delete") {
				t.Fatalf("error %q must name the file %s and say to delete it", msg, path)
			}
		})
	}
}

func TestStateHostileSourceNames(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	s := StateDir{Dir: filepath.Join(root, "state")}
	names := []string{
		"..", ".", "../escape", "../../etc/passwd", "/etc/passwd", "a/b", `a\b`, "a b",
		"nul\x00byte", "골프장", strings.Repeat("x", 5000), "sim-golf", "sim_golf", "sim.golf", "SIM-GOLF",
	}
	paths := map[string]string{}
	for _, n := range names {
		p := s.Path(n)
		if filepath.Dir(p) != s.Dir {
			t.Fatalf("Path(%q) = %s, outside %s", n, p, s.Dir)
		}
		if len(filepath.Base(p)) > 100 {
			t.Fatalf("Path(%q) = %s, name too long", n, p)
		}
		if prev, dup := paths[p]; dup {
			t.Fatalf("Path(%q) = Path(%q) = %s", n, prev, p)
		}
		paths[p] = n

		snap := Snapshot{Source: n, CrawlID: "c", Listings: map[string]SnapshotEntry{}}
		if err := s.Save(snap); err != nil {
			t.Fatalf("Save(%q): %v", n, err)
		}
		got, err := s.Load(n)
		if err != nil || got.Source != n {
			t.Fatalf("Load(%q) = %q, %v", n, got.Source, err)
		}
	}
	// Every file landed directly in Dir; nothing was written next to it or above it.
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "state" {
		t.Fatalf("files outside the state dir: %v", entries)
	}
	files, err := os.ReadDir(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(names) {
		t.Fatalf("%d files in the state dir, want %d", len(files), len(names))
	}

	if _, err := s.Load(""); err == nil {
		t.Fatal("Load of an empty source name must fail")
	}
	if err := s.Save(Snapshot{}); err == nil {
		t.Fatal("Save of a snapshot without a source must fail")
	}
}

// TestStateLoadsVersion1: a snapshot written before epochs, lifetimes and tombstones loads; its
// listings are in their first lifetime and the epoch is the old snapshot's crawl, so every
// re-derivation from it gives the same ids.
func TestStateLoadsVersion1(t *testing.T) {
	t.Parallel()
	dir := StateDir{Dir: t.TempDir()}
	v1 := `{"version":1,"source":"sim-golf","crawl_id":"sim-golf@2026-11-20T08:00:00+09:00","at":"2026-11-20T08:00:00+09:00","listings":{"sim-golf|A||2026-12-05|07:00":{"listing":{"source":"sim-golf","course_name":"A","round_date":"12/05","play_date":"2026-12-05","tee_time":"07:00","price_krw":100,"players":4},"misses":1,"first_seen":"2026-11-20T08:00:00+09:00"}}}`
	if err := os.WriteFile(dir.Path("sim-golf"), []byte(v1), 0o644); err != nil {
		t.Fatal(err)
	}
	prev, err := dir.Load("sim-golf")
	if err != nil {
		t.Fatal(err)
	}
	if prev.OpenCount() != 1 {
		t.Fatalf("v1 snapshot: %d open listings", prev.OpenCount())
	}
	var ids []string
	for n := range 2 {
		out, next, _ := Diff(prev, nil, crawlAt(t, 5+n, "2026-11-20 09:0"+fmt.Sprint(n), true), DiffOptions{})
		if len(out) != 1 || out[0].EventType != events.ListingClosed || next.Epoch != prev.CrawlID {
			t.Fatalf("second miss of a v1 entry: %+v, epoch %q", out, next.Epoch)
		}
		ids = append(ids, out[0].EventID.String())
		if err := dir.Save(next); err != nil {
			t.Fatal(err)
		}
		if back, err := dir.Load("sim-golf"); err != nil || back.Epoch != prev.CrawlID {
			t.Fatalf("saved v2 snapshot: %v, epoch %q", err, back.Epoch)
		}
	}
	if ids[0] != ids[1] {
		t.Errorf("the close re-derived from a v1 snapshot changed id: %v", ids)
	}
}
