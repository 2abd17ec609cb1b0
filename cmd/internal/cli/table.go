package cli

import (
	"io"
	"strings"

	"golang.org/x/text/width"
)

// Table writes rows as aligned columns, two spaces apart. Unlike text/tabwriter it measures cells
// by their width on a terminal, so Korean course names (two columns a syllable) line up.
type Table struct{ rows [][]string }

// Add appends a row.
func (t *Table) Add(cells ...string) { t.rows = append(t.rows, cells) }

// Write writes the rows to w.
func (t *Table) Write(w io.Writer) error {
	var widths []int
	for _, r := range t.rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], DisplayWidth(c))
		}
	}
	var b strings.Builder
	for _, r := range t.rows {
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-DisplayWidth(c)+2))
			}
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// DisplayWidth is how many terminal columns s takes: East Asian wide and full-width runes take two.
func DisplayWidth(s string) int {
	n := 0
	for _, r := range s {
		switch width.LookupRune(r).Kind() {
		case width.EastAsianWide, width.EastAsianFullwidth:
			n += 2
		default:
			n++
		}
	}
	return n
}
