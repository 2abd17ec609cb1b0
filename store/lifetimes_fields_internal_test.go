package store

import (
	"reflect"
	"testing"
	"time"
)

// An embedded struct (Lifetime's events.Attributes) is its fields, each named by its json tag in
// the view, --json and the CSV, and shown in the table; a pointer to text is text for the CSV's
// neutralisation. (events.Attributes may be empty: this stands in for a listing with attributes.)
func TestFieldsOfAnEmbeddedStruct(t *testing.T) {
	t.Parallel()
	type attributes struct {
		Holes  *int    `json:"holes,omitempty"`
		Region *string `json:"course_region,omitempty"`
	}
	type row struct {
		Key string `db:"listing_key" json:"listing_key" csv:"listing_key" table:"-"`
		attributes
	}
	want := []lifetimeField{
		{index: []int{0}, db: "listing_key", json: "listing_key", csv: "listing_key"},
		{index: []int{1, 0}, db: "holes", json: "holes", csv: "holes", inTable: true},
		{index: []int{1, 1}, db: "course_region", json: "course_region", csv: "course_region", inTable: true},
	}
	if got := fieldsOf(reflect.TypeFor[row]()); !reflect.DeepEqual(got, want) {
		t.Errorf("fieldsOf = %+v, want %+v", got, want)
	}
	for typ, text := range map[reflect.Type]bool{reflect.TypeFor[*string](): true, reflect.TypeFor[string](): true,
		reflect.TypeFor[Date](): true, reflect.TypeFor[*int](): false, reflect.TypeFor[time.Time](): false} {
		if isText(typ) != text {
			t.Errorf("isText(%s) = %v", typ, !text)
		}
	}
}
