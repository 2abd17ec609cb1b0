package site

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/schema"
)

// A cell's parser and the consumer agree on the cell's domain: for every cell, everything its
// parser lets into a listing (over the cells' samples, the normalisers' test cases and thousands of
// values generated around them) makes events that pass events.Validate, the consumer's check, and
// the published JSON Schema (events/schema) with the bounds of the cell's field. A parser that
// admitted what the consumer dead-letters (players 101, a tee time 24:10, play date 2026-02-30, a
// negative price) fails here, not in the consumer's dead-letter table.
func TestEveryCellParsesToValidEvents(t *testing.T) {
	t.Parallel()
	st := cellSite(t)
	for i, c := range cellTable {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			inputs := cellInputs(rand.New(rand.NewPCG(47, uint64(i))), 3000)
			accepted := 0
			for _, v := range inputs {
				if checkCellValue(t, st, i, v) {
					accepted++
				}
			}
			t.Logf("%s: %d of %d values made a listing", c.Name, accepted, len(inputs))
			if accepted == 0 {
				t.Errorf("no value of %s made a listing: the property was never checked", c.Name)
			}
		})
	}
}

// FuzzCellParsesToValidEvents is TestEveryCellParsesToValidEvents driven by the fuzzer: cell
// (modulo the table's length) read from raw.
func FuzzCellParsesToValidEvents(f *testing.F) {
	for i := range cellTable {
		for _, v := range cellSeeds() {
			f.Add(uint8(i), v)
		}
	}
	st := cellSite(f)
	f.Fuzz(func(t *testing.T, cell uint8, raw string) {
		checkCellValue(t, st, int(cell)%len(cellTable), raw)
	})
}

// checkCellValue reads raw as cell i of a row of good samples (cellRow) and, when the row makes a
// listing, checks its events (opened; changed to it from the good row's listing, and back, so that
// previous holds it; closed) with events.Validate and the schema. It reports whether the row made a
// listing.
func checkCellValue(t *testing.T, st *Site, i int, raw string) bool {
	t.Helper()
	at := time.Date(2026, 4, 20, 9, 0, 0, 0, Seoul())
	l, _, err := st.Listing(cellRow(t, i, raw), "http://127.0.0.1:8089/x", at)
	if err != nil {
		return false
	}
	good, _, err := st.Listing(cellRow(t, -1, ""), "http://127.0.0.1:8089/x", at)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []events.Event{
		events.Opened(l, "crawl-1", at), events.Changed(good, l, "crawl-1", at),
		events.Changed(l, good, "crawl-1", at), events.Closed(l, "crawl-1", at, events.Booked),
	} {
		if err := e.Validate(); err != nil {
			t.Errorf("%s %q makes a listing whose %s event events.Validate rejects: %v", cellTable[i].Name, raw, e.EventType, err)
			continue
		}
		b, err := events.Encode(e)
		if err != nil {
			t.Errorf("%s %q: encode its %s event: %v", cellTable[i].Name, raw, e.EventType, err)
			continue
		}
		if err := schema.Validate(b); err != nil {
			t.Errorf("%s %q makes a listing whose %s event the JSON Schema rejects: %v", cellTable[i].Name, raw, e.EventType, err)
		}
	}
	return true
}

// cellSeeds are the values every cell is tried with before the generated ones: every cell's
// samples, the normalisers' test cases, and the values at and past the contract's bounds.
func cellSeeds() []string {
	var out []string
	for _, s := range cellSamples {
		out = append(out, s.good, s.other, s.bad)
	}
	for _, c := range priceCases {
		out = append(out, c.raw)
	}
	for _, c := range playersCases {
		out = append(out, c.raw)
	}
	for _, c := range teeTimeCases {
		out = append(out, c.raw)
	}
	for _, c := range playDateCases {
		out = append(out, c.raw)
	}
	for _, c := range cleanTextCases {
		out = append(out, c.in)
	}
	return append(out, "0", "-1", "99", "100", "101", "999", "1000", "9223372036854775807", "9223372036854775808",
		strconv.FormatInt(MaxPriceKRW, 10), strconv.FormatInt(MaxPriceKRW+1, 10), "-150,000원",
		"00:00", "23:59", "24:00", "24:10", "2400", "12:60", "오후 12:30", "오전 12:30", "11:59 PM", "12시 60분",
		"12/31", "01/01", "02/29", "02/30", "13/01", "00/10", "2026-02-30", "2026-02-28", "0000-01-01", "9999-12-31",
		strings.Repeat("가", 67), strings.Repeat("가", 68), strings.Repeat("a", 200), strings.Repeat("a", 201),
		strings.Repeat("1", 64), strings.Repeat("1", 65), " ", "\u00a0", "-", "마감", "전화문의")
}

// cellInputTokens are the pieces the generated values are made of: what cells' values hold.
var cellInputTokens = []string{
	":", ",", ".", "/", "-", " ", "\u00a0", "(토)", "원", "만", "천", "₩", "KRW", "명", "인", "pax",
	"시", "분", "반", "오전", "오후", "AM", "PM", "홀", "코스", "CC", "OUT", "&amp;", "\u200b", "\u0301", "\xff",
}

// cellInputs are the seeds and n values generated from them with r: a seed with a digit changed, a
// piece inserted or a tail cut, a run of digits (up to 25), or a few pieces and numbers joined.
func cellInputs(r *rand.Rand, n int) []string {
	seeds := cellSeeds()
	out := append([]string(nil), seeds...)
	digits := func(max int) string {
		b := make([]byte, 1+r.IntN(max))
		for i := range b {
			b[i] = byte('0' + r.IntN(10))
		}
		return string(b)
	}
	for range n {
		s := seeds[r.IntN(len(seeds))]
		switch r.IntN(5) {
		case 0: // a digit changed
			if i := strings.IndexAny(s, "0123456789"); i >= 0 {
				j := i + r.IntN(len(s)-i)
				if s[j] >= '0' && s[j] <= '9' {
					s = s[:j] + strconv.Itoa(r.IntN(10)) + s[j+1:]
				}
			}
		case 1: // a piece inserted
			i := r.IntN(len(s) + 1)
			s = s[:i] + cellInputTokens[r.IntN(len(cellInputTokens))] + s[i:]
		case 2: // a tail cut
			s = s[:r.IntN(len(s)+1)]
		case 3:
			s = digits(25)
		default:
			var b strings.Builder
			for range 1 + r.IntN(5) {
				if r.IntN(2) == 0 {
					b.WriteString(digits(7))
				} else {
					b.WriteString(cellInputTokens[r.IntN(len(cellInputTokens))])
				}
			}
			s = b.String()
		}
		out = append(out, s)
	}
	return out
}
