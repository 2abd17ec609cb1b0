package storetest

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
)

// Every nullable field of events.Listing is varied by RandomHistory: each comes out null and set
// across histories, with values the contract accepts. A pointer field added to Listing without an
// entry in NullableValues fails here (and RandomHistory panics naming it).
func TestNullableValuesCoverTheListing(t *testing.T) {
	t.Parallel()
	var pointers []string
	for _, f := range reflect.VisibleFields(reflect.TypeFor[events.Listing]()) {
		if f.Type.Kind() == reflect.Pointer {
			pointers = append(pointers, f.Name)
			if _, ok := NullableValues[f.Name]; !ok {
				t.Errorf("events.Listing.%s is nullable and has no entry in NullableValues", f.Name)
			}
		}
	}
	if len(pointers) != len(NullableValues) {
		t.Errorf("NullableValues has %d entries, events.Listing %d pointer fields %v", len(NullableValues), len(pointers), pointers)
	}
	if t.Failed() {
		return
	}
	l := events.Listing{Source: "s", CourseName: "C", RoundDate: "2026-05-01", PlayDate: "2026-05-01", TeeTime: "07:00"}
	rng := rand.New(rand.NewPCG(1, 2))
	null, set, values := map[string]int{}, map[string]int{}, map[string]map[string]bool{}
	for range 50 {
		for _, e := range RandomHistory(rng, l, time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)) {
			if err := e.Validate(); err != nil {
				t.Fatalf("RandomHistory made an invalid event: %v", err)
			}
			ev := reflect.ValueOf(e)
			for _, name := range pointers {
				f := ev.FieldByName(name)
				if f.IsNil() {
					null[name]++
					continue
				}
				set[name]++
				if values[name] == nil {
					values[name] = map[string]bool{}
				}
				values[name][fmt.Sprint(f.Elem().Interface())] = true
			}
		}
	}
	for _, name := range pointers {
		if null[name] == 0 || set[name] == 0 || len(values[name]) < 2 {
			t.Errorf("%s: null %d times, set %d times to %d distinct values; want both, and several values", name, null[name], set[name], len(values[name]))
		}
	}
}
