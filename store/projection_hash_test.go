package store

import (
	"slices"
	"strings"
	"testing"

	"github.com/golfcrawler/golf-crawler/views"
)

// A comment edited, added or removed in the projection's definitions keeps ProjectionHash (a
// changed hash rebuilds every deployment's projection from all its events); a change of what the
// database runs, a -- inside a string among them, changes it.
func TestProjectionHashIgnoresComments(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"select 1 -- one\n-- two\n\nfrom x  \n", "select 1\nfrom x"},
		{"select '--not a comment' -- a comment", "select '--not a comment'"},
		{`select "a--b", 'it''s -- still text' from t -- c`, `select "a--b", 'it''s -- still text' from t`},
		{"create function f() returns int as $$\n  -- inside\n  select 1; -- after\n$$ language sql;", "create function f() returns int as $$\n  select 1;\n$$ language sql;"},
	} {
		if got := sqlWithoutComments(tc.in); got != tc.want {
			t.Errorf("sqlWithoutComments(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}

	sources := append(slices.Clone(views.Sources), ProjectionSources...)
	if projectionHash(sources) != ProjectionHash() {
		t.Fatal("ProjectionHash is not the hash of views.Sources and ProjectionSources")
	}
	commented := slices.Clone(sources)
	for i, s := range commented {
		s = "-- a new first line\n" + strings.ReplaceAll(s, "\n-- ", "\n-- reworded: ")
		commented[i] = strings.Replace(s, "\n", " -- a comment at a line's end\n", 1)
	}
	if slices.Equal(commented, sources) {
		t.Fatal("no comment was changed")
	}
	if projectionHash(commented) != ProjectionHash() {
		t.Error("editing comments changes ProjectionHash: a comment would rebuild every deployment's projection")
	}
	changed := slices.Clone(sources)
	changed[0] = strings.Replace(changed[0], "select", "select  1 as x,", 1)
	if projectionHash(changed) == ProjectionHash() {
		t.Error("a change of a statement keeps ProjectionHash: a deployment would keep the old projection")
	}
	quoted := []string{"select '-- a'"}
	if projectionHash(quoted) == projectionHash([]string{"select '-- b'"}) {
		t.Error("a -- inside a string is read as a comment")
	}
}
