package crawler

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// A rows path with [] flattens groups: object members (keyed) and array elements, at any depth;
// a group without the next part has no rows, a value that is no array or object where groups
// should be is an error.
func TestFlattenRows(t *testing.T) {
	t.Parallel()
	doc := gjson.Parse(`{"dates":{"2026-12-05":[{"name":"동","times":[{"t":"0600"},{"t":"0608"}]},{"name":"서","times":null}],
		"2026-12-06":[{"name":"동","times":[{"t":"0700"}]}]}, "bad":{"x":[1,"a"]}}`)
	rows, err := flattenRows(doc, strings.Split("dates[][].times[]", "[]"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%d %s %s %s", r.index, r.keys[0], r.groups[1].Get("name"), r.row().Get("t")))
	}
	want := []string{"0 2026-12-05 동 0600", "1 2026-12-05 동 0608", "2 2026-12-06 동 0700"}
	if !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
	for _, p := range []string{"missing[]", "bad[][][]", "dates[][].name[]"} {
		if _, err := flattenRows(doc, strings.Split(p, "[]")); err == nil {
			t.Errorf("%s: no error", p)
		}
	}
}
