package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// dirEntries lists the names in dir.
var t0Export = time.Date(2026, 4, 27, 9, 0, 0, 0, time.UTC)

func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// TestConcurrentExportsToOnePathNeverMix: two exports of different sources to the same --out,
// again and again: each succeeds, and the file is always exactly one of the two exports, never a
// mix or a cut; no temporary file is left behind.
func TestConcurrentExportsToOnePathNeverMix(t *testing.T) {
	t.Parallel()
	pool, dbURL := storetest.NewDBURL(t)
	var msgs []store.Message
	for i := range 4000 {
		price, players := int64(100000+i), 4
		l := events.Listing{Source: fmt.Sprintf("site-%c", 'a'+i%2), CourseName: fmt.Sprintf("Course %d", i/40), RoundDate: seedPlayDate,
			PlayDate: seedPlayDate, TeeTime: fmt.Sprintf("%02d:%02d", 5+(i%40)/4, (i%4)*15), Values: events.Values{PriceKRW: &price, Players: &players}}
		e := events.Opened(l, "crawl", t0Export)
		msgs = append(msgs, store.Message{Topic: "t", Offset: int64(i), Event: &e})
	}
	if _, err := store.New(pool).Ingest(t.Context(), msgs); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DATABASE_URL": dbURL}
	want := map[string]string{}
	for _, src := range []string{"site-a", "site-b"} {
		out, _, err := runCLI(t, t.Context(), env, "export", "--source", src)
		if err != nil || strings.Count(out, "\n") != 2000 {
			t.Fatalf("export --source %s: %v, %d lines", src, err, strings.Count(out, "\n"))
		}
		want[src] = out
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "events.jsonl")
	for round := range 15 {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, src := range []string{"site-a", "site-b"} {
			wg.Go(func() { _, _, errs[i] = runCLI(t, t.Context(), env, "export", "--source", src, "--out", file) })
		}
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			t.Fatalf("round %d: concurrent exports failed: %v / %v", round, errs[0], errs[1])
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(b); got != want["site-a"] && got != want["site-b"] {
			t.Fatalf("round %d: %s is neither export (%d bytes, %d lines; the exports have %d and %d bytes)",
				round, file, len(got), strings.Count(got, "\n"), len(want["site-a"]), len(want["site-b"]))
		}
		if names := dirEntries(t, dir); len(names) != 1 {
			t.Fatalf("round %d: %s holds %v, want only events.jsonl", round, dir, names)
		}
	}
}

// TestFailedExportLeavesNoTempFile: an export that fails (the target is a directory; the table is
// gone) leaves no temporary file and does not touch an existing file.
func TestFailedExportLeavesNoTempFile(t *testing.T) {
	t.Parallel()
	pool, dbURL := storetest.NewDBURL(t)
	env := map[string]string{"DATABASE_URL": dbURL}
	dir := t.TempDir()

	target := filepath.Join(dir, "adir")
	if err := os.MkdirAll(filepath.Join(target, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, t.Context(), env, "export", "--out", target); err == nil {
		t.Error("export --out onto a directory succeeded")
	}
	if names := dirEntries(t, dir); !slices.Equal(names, []string{"adir"}) {
		t.Errorf("after export onto a directory failed, %s holds %v, want only adir", dir, names)
	}

	file := filepath.Join(dir, "kept.jsonl")
	if err := os.WriteFile(file, []byte("previous export\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(t.Context(), "drop table booking_events cascade"); err != nil { // and the views over it
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, t.Context(), env, "export", "--out", file); err == nil {
		t.Error("export without a booking_events table succeeded")
	}
	if b, _ := os.ReadFile(file); string(b) != "previous export\n" {
		t.Errorf("a failed export changed the existing file: %q", b)
	}
	if names := dirEntries(t, dir); !slices.Equal(names, []string{"adir", "kept.jsonl"}) {
		t.Errorf("after a failed export, %s holds %v, want adir and kept.jsonl", dir, names)
	}
}
