package cli

import (
	"strings"
	"testing"
)

func TestTableAlignsWideCharacters(t *testing.T) {
	t.Parallel()
	var tb Table
	tb.Add("course", "status")
	tb.Add("레이크&힐스 CC", "booked")
	tb.Add("Pine", "open")
	var b strings.Builder
	if err := tb.Write(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	var cols []int
	for _, l := range lines {
		i := strings.LastIndex(l, "  ")
		cols = append(cols, DisplayWidth(l[:i+2]))
	}
	if cols[0] != cols[1] || cols[1] != cols[2] {
		t.Fatalf("second column starts at display columns %v:\n%s", cols, b.String())
	}
}
