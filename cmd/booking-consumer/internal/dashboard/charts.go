package dashboard

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// SVG is a chart as shapes in user units; the "svg" template writes it. Shapes that stand for a
// datum carry the class "datum" and a title (the browser's tooltip, and what tests look for).
type SVG struct {
	W, H    float64
	Label   string // aria-label: what the chart shows
	Rects   []Rect
	Lines   []Line
	Circles []Circle
	Paths   []Path // curves and bands (incidence.go)
	Texts   []Text
}

// Rect is a bar, a box or a heatmap cell.
type Rect struct {
	X, Y, W, H   float64
	Fill, Class  string
	Title, Value string
}

// Line is an axis, a grid line or a whisker.
type Line struct {
	X1, Y1, X2, Y2 float64
	Stroke         string
	Width          float64
}

// Circle is a point (an event on a timeline).
type Circle struct {
	CX, CY, R    float64
	Fill, Class  string
	Title, Value string
}

// Text is a label.
type Text struct {
	X, Y   float64
	Anchor string // start, middle, end
	Class  string
	S      string
}

func (s *SVG) rect(r Rect) { s.Rects = append(s.Rects, r) }
func (s *SVG) line(l Line) { s.Lines = append(s.Lines, l) }
func (s *SVG) text(x, y float64, a, t string) {
	s.Texts = append(s.Texts, Text{X: x, Y: y, Anchor: a, S: t})
}

// Points counts the data shapes.
func (s *SVG) Points() int {
	n := 0
	for _, r := range s.Rects {
		if r.Class == "datum" {
			n++
		}
	}
	for _, c := range s.Circles {
		if c.Class == "datum" {
			n++
		}
	}
	for _, p := range s.Paths {
		if strings.HasPrefix(p.Class, "datum") {
			n++
		}
	}
	return n
}

// Colours: by status and by event type (ColorBrewer, readable for the common colour blindness).
var (
	statusColor = map[string]string{"open": "#3182bd", "booked": "#31a354", "expired": "#969696"}
	typeColor   = map[string]string{"listing_opened": "#3182bd", "listing_changed": "#fd8d3c", "listing_closed": "#31a354"}
	typeOrder   = []string{"listing_opened", "listing_changed", "listing_closed"}
)

// bars is a vertical bar chart with one label under each bar.
func bars(label string, labels []string, values []float64, colors []string, format func(float64) string) *SVG {
	const w, h, left, right, top, bottom = 560.0, 200.0, 48.0, 12.0, 12.0, 32.0
	s := &SVG{W: w, H: h, Label: label}
	maxV := 0.0
	for _, v := range values {
		maxV = math.Max(maxV, v)
	}
	if maxV == 0 {
		maxV = 1
	}
	ph := h - top - bottom
	slot := (w - left - right) / float64(max(len(values), 1))
	s.line(Line{left, h - bottom, w - right, h - bottom, "#666", 1})
	for _, t := range niceTicks(maxV, 4) {
		y := h - bottom - t/maxV*ph
		s.line(Line{left, y, w - right, y, "#e5e5e5", 1})
		s.text(left-6, y+4, "end", format(t))
	}
	step := max(1, len(labels)/16)
	for i, v := range values {
		bh := v / maxV * ph
		x := left + float64(i)*slot + slot*0.1
		fill := "#3182bd"
		if i < len(colors) {
			fill = colors[i]
		}
		s.rect(Rect{X: x, Y: h - bottom - bh, W: slot * 0.8, H: bh, Fill: fill, Class: "datum",
			Title: labels[i] + ": " + format(v), Value: strconv.FormatFloat(v, 'f', -1, 64)})
		if i%step == 0 {
			s.text(x+slot*0.4, h-bottom+16, "middle", labels[i])
		}
	}
	return s
}

// niceTicks returns up to about n round values in (0, maxV].
func niceTicks(maxV float64, n int) []float64 {
	raw := maxV / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var out []float64
	for t := step; t <= maxV*1.0001; t += step {
		out = append(out, t)
	}
	return out
}

func count(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// eventsPerHour is a stacked bar per hour (opened, changed, closed) over [from, to).
func eventsPerHour(from, to time.Time, loc *time.Location, byHour map[int64]map[string]int64) *SVG {
	const w, h, left, right, top, bottom = 960.0, 240.0, 48.0, 12.0, 16.0, 40.0
	hours := int(to.Sub(from) / time.Hour)
	s := &SVG{W: w, H: h, Label: "events per hour by type"}
	maxV := int64(1)
	for _, m := range byHour {
		var t int64
		for _, n := range m {
			t += n
		}
		maxV = max(maxV, t)
	}
	ph := h - top - bottom
	slot := (w - left - right) / float64(max(hours, 1))
	s.line(Line{left, h - bottom, w - right, h - bottom, "#666", 1})
	for _, t := range niceTicks(float64(maxV), 4) {
		y := h - bottom - t/float64(maxV)*ph
		s.line(Line{left, y, w - right, y, "#e5e5e5", 1})
		s.text(left-6, y+4, "end", count(t))
	}
	for i := range hours {
		hr := from.Add(time.Duration(i) * time.Hour)
		x := left + float64(i)*slot
		local := hr.In(loc)
		if local.Hour() == 0 {
			s.line(Line{x, top, x, h - bottom + 4, "#bbb", 1})
			s.text(x+2, h-bottom+16, "start", local.Format("01-02 Mon"))
		}
		y := h - bottom
		for _, typ := range typeOrder {
			n := byHour[hr.Unix()][typ]
			if n == 0 {
				continue
			}
			bh := float64(n) / float64(maxV) * ph
			y -= bh
			s.rect(Rect{X: x, Y: y, W: math.Max(slot-0.5, 0.5), H: bh, Fill: typeColor[typ], Class: "datum",
				Title: fmt.Sprintf("%s %s: %d %s", local.Format("2006-01-02 15:00"), local.Format("MST"), n, typ),
				Value: strconv.FormatInt(n, 10)})
		}
	}
	return s
}

// Duration scale: log10 of seconds between one minute and 60 days.
var durTicks = []time.Duration{time.Minute, 10 * time.Minute, time.Hour, 6 * time.Hour, 24 * time.Hour,
	3 * 24 * time.Hour, 7 * 24 * time.Hour, 30 * 24 * time.Hour}

func logPos(d time.Duration, lo, hi float64) float64 {
	v := math.Log10(math.Max(d.Seconds(), 60))
	a, b := math.Log10(60), math.Log10(60*86400)
	return lo + (math.Min(v, b)-a)/(b-a)*(hi-lo)
}

// heatmap: median time to book, rows = courses, columns = weekdays Monday..Sunday.
func heatmap(courses []string, med map[string]map[time.Weekday]time.Duration, n map[string]map[time.Weekday]int) *SVG {
	const left, top, cw, ch = 220.0, 28.0, 92.0, 26.0
	w := left + 7*cw + 12
	h := top + float64(len(courses))*ch + 12
	s := &SVG{W: w, H: h, Label: "median time to book among booked listings, by course and weekday of the play date"}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, m := range med {
		for _, d := range m {
			v := math.Log10(math.Max(d.Seconds(), 1))
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if hi <= lo {
		hi = lo + 1
	}
	days := []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday, time.Sunday}
	for j, wd := range days {
		s.text(left+float64(j)*cw+cw/2, top-10, "middle", weekdayLabel(wd))
	}
	for i, c := range courses {
		y := top + float64(i)*ch
		s.text(left-8, y+ch/2+4, "end", c)
		for j, wd := range days {
			x := left + float64(j)*cw
			d, ok := med[c][wd]
			if !ok {
				s.rect(Rect{X: x + 1, Y: y + 1, W: cw - 2, H: ch - 2, Fill: "#f7f7f7"})
				continue
			}
			f := (math.Log10(math.Max(d.Seconds(), 1)) - lo) / (hi - lo)
			s.rect(Rect{X: x + 1, Y: y + 1, W: cw - 2, H: ch - 2, Fill: heat(f), Class: "datum",
				Title: fmt.Sprintf("%s, %s: median %s over %d booked", c, weekdayLabel(wd), fmtDur(d), n[c][wd]),
				Value: strconv.FormatFloat(d.Seconds(), 'f', 0, 64)})
			t := Text{X: x + cw/2, Y: y + ch/2 + 4, Anchor: "middle", S: fmtDur(d)}
			if f < 0.45 {
				t.Class = "on-dark"
			}
			s.Texts = append(s.Texts, t)
		}
	}
	return s
}

// heat maps 0 (fastest) .. 1 (slowest) from dark red to pale yellow.
func heat(f float64) string {
	a := [3]float64{0xb3, 0x00, 0x00}
	b := [3]float64{0xfe, 0xf0, 0xd9}
	var c [3]int
	for i := range c {
		c[i] = int(a[i] + (b[i]-a[i])*f)
	}
	return fmt.Sprintf("#%02x%02x%02x", c[0], c[1], c[2])
}

var koreanWeekday = [...]string{"일", "월", "화", "수", "목", "금", "토"}

func weekdayLabel(d time.Weekday) string { return d.String()[:3] + " " + koreanWeekday[d] }

// boxes: one horizontal box per course (10th..90th whiskers, 25th..75th box, median line) on a
// log time axis.
func boxes(spreads []spreadRow) *SVG {
	const left, right, top, rowH = 220.0, 16.0, 12.0, 26.0
	const w = 900.0
	h := top + float64(len(spreads))*rowH + 30
	s := &SVG{W: w, H: h, Label: "time to book per course among booked listings: 10th, 25th, 50th, 75th and 90th percentile"}
	axisY := h - 24
	s.line(Line{left, axisY, w - right, axisY, "#666", 1})
	for _, t := range durTicks {
		x := logPos(t, left, w-right)
		s.line(Line{x, top, x, axisY + 4, "#e5e5e5", 1})
		s.text(x, axisY+16, "middle", fmtDur(t))
	}
	for i, b := range spreads {
		y := top + float64(i)*rowH
		mid := y + rowH/2
		s.text(left-8, mid+4, "end", b.Course)
		px := func(d time.Duration) float64 { return logPos(d, left, w-right) }
		s.line(Line{px(b.P[0]), mid, px(b.P[4]), mid, "#555", 1})
		s.line(Line{px(b.P[0]), mid - 5, px(b.P[0]), mid + 5, "#555", 1})
		s.line(Line{px(b.P[4]), mid - 5, px(b.P[4]), mid + 5, "#555", 1})
		s.rect(Rect{X: px(b.P[1]), Y: y + 4, W: math.Max(px(b.P[3])-px(b.P[1]), 1), H: rowH - 8, Fill: "#9ecae1", Class: "datum",
			Title: fmt.Sprintf("%s: %d booked; p10 %s, p25 %s, median %s, p75 %s, p90 %s", b.Course, b.Booked,
				fmtDur(b.P[0]), fmtDur(b.P[1]), fmtDur(b.P[2]), fmtDur(b.P[3]), fmtDur(b.P[4])),
			Value: strconv.FormatFloat(b.P[2].Seconds(), 'f', 0, 64)})
		s.line(Line{px(b.P[2]), y + 4, px(b.P[2]), y + rowH - 4, "#08306b", 2})
	}
	return s
}

type spreadRow struct {
	Course string
	Booked int
	P      [5]time.Duration
}

// fmtDur writes a duration for people: 45s, 12m, 3h05m, 2d04h.
func fmtDur(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	default:
		return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
	}
}

// span is one lifetime of a listing on the timeline.
type span struct {
	From, To time.Time
	Status   string // booked, expired, open, closed
}

// timeline draws a listing's lifetimes as bars and its events as points.
func timeline(spans []span, evs []timelineEvent, loc *time.Location) *SVG {
	const w, h, left, right = 960.0, 150.0, 20.0, 20.0
	s := &SVG{W: w, H: h, Label: "the listing's lifetimes and events over time"}
	if len(evs) == 0 {
		return s
	}
	lo, hi := evs[0].At, evs[0].At
	for _, e := range evs {
		lo, hi = minT(lo, e.At), maxT(hi, e.At)
	}
	for _, sp := range spans {
		lo, hi = minT(lo, sp.From), maxT(hi, sp.To)
	}
	pad := max(hi.Sub(lo)/20, time.Minute)
	lo, hi = lo.Add(-pad), hi.Add(pad)
	x := func(t time.Time) float64 {
		return left + float64(t.Sub(lo))/float64(hi.Sub(lo))*(w-left-right)
	}
	axisY := h - 30.0
	s.line(Line{left, axisY, w - right, axisY, "#666", 1})
	for i := 0; i <= 4; i++ {
		t := lo.Add(hi.Sub(lo) * time.Duration(i) / 4)
		s.line(Line{x(t), 20, x(t), axisY + 4, "#e5e5e5", 1})
		anchor := "middle"
		switch i {
		case 0:
			anchor = "start"
		case 4:
			anchor = "end"
		}
		s.text(x(t), axisY+18, anchor, t.In(loc).Format("01-02 15:04"))
	}
	for _, sp := range spans {
		fill := statusColor[sp.Status]
		if fill == "" {
			fill = "#3182bd"
		}
		s.rect(Rect{X: x(sp.From), Y: 30, W: math.Max(x(sp.To)-x(sp.From), 2), H: 30, Fill: fill, Class: "datum",
			Title: fmt.Sprintf("%s: %s → %s (%s)", sp.Status, sp.From.In(loc).Format("2006-01-02 15:04"),
				sp.To.In(loc).Format("2006-01-02 15:04 MST"), fmtDur(sp.To.Sub(sp.From))),
			Value: strconv.FormatFloat(sp.To.Sub(sp.From).Seconds(), 'f', 0, 64)})
	}
	for _, e := range evs {
		s.Circles = append(s.Circles, Circle{CX: x(e.At), CY: 85, R: 6, Fill: typeColor[e.Type], Class: "datum",
			Title: e.At.In(loc).Format("2006-01-02 15:04:05 MST") + " " + e.Type + " " + e.Detail, Value: e.Type})
	}
	return s
}

type timelineEvent struct {
	At     time.Time
	Type   string
	Detail string
}

func minT(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxT(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
