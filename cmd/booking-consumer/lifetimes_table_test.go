package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/store"
)

// The CLI's table is the CSV without the listing key, chosen by name: whatever the field order of
// store.Lifetime (a new field may go anywhere, last included), every other column is there and the
// key is not.
func TestLifetimesTableLeavesOutOnlyTheListingKey(t *testing.T) {
	t.Parallel()
	price := int64(150000)
	l := store.Lifetime{PlayDate: "2026-12-05", TeeTime: "07:30", Source: "sim-golf", CourseName: "레이크 CC",
		CoursePart: "OUT", Status: store.StatusOpen, OpenedAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
		LastEventType: "listing_opened", OpenPriceKRW: &price, LastPriceKRW: &price,
		ListingKey: "sim-golf|레이크 CC|OUT|2026-12-05|07:30"}
	var b bytes.Buffer
	if err := writeLifetimesTable(&b, []store.Lifetime{l}, time.UTC); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	header := strings.Fields(lines[0])
	want := slices.DeleteFunc(slices.Clone(store.LifetimeCSVHeader), func(h string) bool { return h == "listing_key" })
	if !slices.Equal(header, want) {
		t.Errorf("table header %v, want the CSV's without listing_key %v", header, want)
	}
	if strings.Contains(b.String(), l.ListingKey) {
		t.Errorf("the table shows the listing key:\n%s", b.String())
	}
}
