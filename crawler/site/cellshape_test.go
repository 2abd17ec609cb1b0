package site

import (
	"slices"
	"testing"
	"time"
)

// The value shapes crawler suggest tells the cells apart by (moved here with the cell table): a
// value has the shapes of the cells listed, and every shape a value has is one its cell's
// normaliser reads.
func TestCellShapes(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, Seoul())
	for in, want := range map[string][]string{
		"06:30": {"tee_time"}, "0630": {"tee_time"}, "06:30:00": {"tee_time"}, "6:30": {"tee_time"}, "\u00a007:08": {"tee_time"},
		"06시 30분": {"tee_time"}, "7시 반": {"tee_time"}, "오전 6:30": {"tee_time"}, "6:30 AM": {"tee_time"}, "25:99": nil,
		"130000": {"price"}, "130,000": {"price"}, "130,000원": {"price"}, "₩150,000": {"price"},
		"14만5천원": {"price"}, "14.5만": {"price"}, "21만원": {"price"}, "전화문의": nil, "-": nil,
		"1230": {"tee_time", "price"}, // a compact tee time reads as a price too; the column decides
		"4":    {"players"}, "4명": {"players"}, "3인": {"players"},
		"12/05": {"round_date"}, "12/05(토)": {"round_date"}, "2026-12-05": nil, "20261205": nil, "2026.12.05": nil,
		"동코스": {"course", "course_part"}, "OUT": {"course", "course_part"}, "레이크 CC": {"course", "course_part"}, "": nil,
	} {
		var got []string
		for _, c := range Cells() {
			for _, sh := range c.Shapes {
				if !sh.Match(in) {
					continue
				}
				got = append(got, c.Name)
				if _, err := c.Reads(in, at); err != nil {
					t.Errorf("%q has the shape %q of %s, which does not read it: %v", in, sh.Name, c.Name, err)
				}
				break
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%q has the shapes of %v, want %v", in, got, want)
		}
	}
}

// A name is what no other shape of the cell table takes: the name shape excludes every shape of the
// table, read from it, so a new cell's values are no names as soon as the cell has its shape (a
// holes cell's "18홀" would otherwise be "a name" and a holes column a candidate for course and
// course_part). Every cell's samples (cellSamples, which a new cell needs) show one of its shapes,
// and a sample with a shape that is not residual has no residual shape.
func TestNameIsNoOtherCellsShape(t *testing.T) {
	t.Parallel()
	for _, c := range cellTable {
		s := cellSamples[c.Name]
		shaped := 0
		for _, v := range []string{s.good, s.other} {
			i := slices.IndexFunc(c.Shapes, func(sh Shape) bool { return sh.Match(v) })
			if i < 0 {
				continue
			}
			shaped++
			if c.Shapes[i].residual {
				continue
			}
			for _, o := range cellTable {
				for _, sh := range o.Shapes {
					if sh.residual && sh.Match(v) {
						t.Errorf("%s's %q has its shape %q and is also %s (%s's shape)", c.Name, v, c.Shapes[i].Name, sh.Name, o.Name)
					}
				}
			}
		}
		if shaped == 0 {
			t.Errorf("cell %s: neither sample (%q, %q) has one of its shapes; give cellSamples one that does", c.Name, s.good, s.other)
		}
	}
}
