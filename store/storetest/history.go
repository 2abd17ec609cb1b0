package storetest

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
)

// RandomHistory makes 1-8 events of listing l from at on, with random types and times (minute
// granularity, so ties happen), each from its own crawl so that ids differ: reopens, double
// closes, changes after a close. Every nullable field of the listing (each pointer field of
// events.Listing: the price, 90,000-130,000 KRW, the players, 1-4, ...) is drawn anew for each
// event, null one time in five, so that a projection that drops or mixes up one of them differs
// from the view. The projection tests of store and views check the view against a reference over
// such histories.
func RandomHistory(rng *rand.Rand, l events.Listing, at time.Time) []events.Event {
	var out []events.Event
	for i := range 1 + rng.IntN(8) {
		at = at.Add(time.Duration(rng.IntN(3)) * time.Minute)
		crawl := fmt.Sprintf("crawl-%d", i)
		next := l
		varyNullable(rng, &next)
		switch k := rng.IntN(10); {
		case i == 0 || k < 3:
			out = append(out, events.Opened(next, crawl, at))
		case k < 6:
			out = append(out, events.Changed(l, next, crawl, at))
		case k < 8:
			out = append(out, events.Closed(next, crawl, at, events.Booked))
		default:
			out = append(out, events.Closed(next, crawl, at, events.Expired))
		}
		l = next
	}
	return out
}

// NullableValues gives a random valid value for every nullable (pointer) field of events.Listing,
// by field name. RandomHistory panics for a pointer field without an entry, so a new nullable field
// is varied by the projection tests from the start (TestNullableValuesCoverTheListing).
var NullableValues = map[string]func(rng *rand.Rand) any{
	"PriceKRW": func(rng *rand.Rand) any { return int64(90000 + rng.IntN(5)*10000) },
	"Players":  func(rng *rand.Rand) any { return 1 + rng.IntN(4) },
}

// varyNullable sets every pointer field of *l to null (one time in five) or to a value from
// NullableValues.
func varyNullable(rng *rand.Rand, l *events.Listing) {
	v := reflect.ValueOf(l).Elem()
	for _, f := range reflect.VisibleFields(v.Type()) {
		if f.Type.Kind() != reflect.Pointer {
			continue
		}
		gen, ok := NullableValues[f.Name]
		if !ok {
			panic(fmt.Sprintf("storetest: no random value for events.Listing.%s: add it to NullableValues", f.Name))
		}
		fv := v.FieldByIndex(f.Index)
		if rng.IntN(5) == 0 {
			fv.SetZero()
			continue
		}
		p := reflect.New(f.Type.Elem())
		p.Elem().Set(reflect.ValueOf(gen(rng)).Convert(f.Type.Elem()))
		fv.Set(p)
	}
}

// Seeds runs f as one parallel subtest per seed 0..n-1 (named SeedN), each with its own
// deterministic rng (PCG of the seed and stream): the property tests over random histories run
// on several histories this way.
func Seeds(t *testing.T, n, stream uint64, f func(t *testing.T, rng *rand.Rand)) {
	t.Helper()
	for seed := range n {
		t.Run(fmt.Sprintf("Seed%d", seed), func(t *testing.T) {
			t.Parallel()
			f(t, rand.New(rand.NewPCG(seed, stream)))
		})
	}
}

// Redelivered is evs as a consumer may receive them: extra more copies of events picked at random
// (duplicates), all in a random arrival order. It appends to and shuffles evs itself.
func Redelivered(rng *rand.Rand, evs []events.Event, extra int) []events.Event {
	for range extra {
		evs = append(evs, evs[rng.IntN(len(evs))])
	}
	rng.Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i] })
	return evs
}
