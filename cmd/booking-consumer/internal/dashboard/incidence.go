package dashboard

// The overview's time to book: the cumulative incidence of booking per course, with its 95% band,
// and the course's weekday curves without bands (store.Summary, docs/time-to-book.md).

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/golfcrawler/golf-crawler/store"
)

// Path is a curve or a band (an SVG path in user units).
type Path struct {
	D                   string
	Fill, Stroke, Class string
	Width               float64
	Title               string
}

// incidencePanel is one course's panel: its chart, the numbers under it.
type incidencePanel struct {
	Course              string
	N, AtRisk           int
	Median              string
	Within1h, Within24h string
	Within7d, Expired   string
	Risk                []riskAt // listings at risk at 0, 1 h, 24 h, 7 d
	Chart               *SVG
}

type riskAt struct {
	Label string
	N     int
}

// weekdayColor colours the weekday curves, Monday first (ColorBrewer Dark2).
var weekdayColor = [...]string{"#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d"}

func mondayIndex(d time.Weekday) int { return (int(d) + 6) % 7 }

// incidenceTicks are the time axis's labels (log scale, one minute to 60 days as durTicks).
var incidenceTicks = []struct {
	d     time.Duration
	label string
}{{10 * time.Minute, "10 min"}, {time.Hour, "1 h"}, {6 * time.Hour, "6 h"}, {24 * time.Hour, "1 d"}, {7 * 24 * time.Hour, "7 d"}, {30 * 24 * time.Hour, "30 d"}}

// incidencePanels makes one panel per course from the summary's course and course x weekday
// groups, in the summary's order (courses sorted).
func incidencePanels(sum store.Summary) []incidencePanel {
	weekdays := map[string][]store.IncidenceGroup{}
	for _, g := range sum.Groups {
		if g.Kind == store.GroupCourseWeekday {
			weekdays[g.Course] = append(weekdays[g.Course], g)
		}
	}
	var out []incidencePanel
	for _, g := range sum.Groups {
		if g.Kind != store.GroupCourse {
			continue
		}
		p := incidencePanel{Course: g.Course, N: g.N, AtRisk: g.Open, Median: medianText(g),
			Within1h: shareText(g.BookedWithin(time.Hour)), Within24h: shareText(g.BookedWithin(24 * time.Hour)),
			Within7d: shareText(g.BookedWithin(7 * 24 * time.Hour)), Expired: shareText(g.ExpiredUnbooked(), true)}
		for _, t := range []struct {
			l string
			d time.Duration
		}{{"0", 0}, {"1h", time.Hour}, {"24h", 24 * time.Hour}, {"7d", 7 * 24 * time.Hour}} {
			p.Risk = append(p.Risk, riskAt{t.l, store.AtRiskAt(g.Curve, t.d)})
		}
		p.Chart = incidenceChart(g, weekdays[g.Course])
		out = append(out, p)
	}
	return out
}

func medianText(g store.IncidenceGroup) string {
	m, ok, never := store.Median(g.Curve)
	switch {
	case ok:
		return fmtDur(m)
	case never:
		return "never: most expire"
	}
	return "not reached: still open"
}

func shareText(v float64, ok bool) string {
	if !ok {
		return "–"
	}
	return strconv.FormatFloat(100*v, 'f', 1, 64) + "%"
}

// incidenceChart draws the course's curve with its band and its weekday curves (no bands) on a
// log time axis.
func incidenceChart(g store.IncidenceGroup, weekdays []store.IncidenceGroup) *SVG {
	const w, h, left, right, top, bottom = 460.0, 230.0, 40.0, 12.0, 12.0, 30.0
	s := &SVG{W: w, H: h, Label: "cumulative incidence of booking by time since opening, " + g.Course + ", with its 95% band and by weekday"}
	x := func(d time.Duration) float64 { return logPos(d, left, w-right) }
	y := func(v float64) float64 { return h - bottom - v*(h-top-bottom) }
	for _, v := range []float64{0, 0.25, 0.5, 0.75, 1} {
		s.line(Line{left, y(v), w - right, y(v), "#e5e5e5", 1})
		s.text(left-4, y(v)+4, "end", strconv.Itoa(int(v*100))+"%")
	}
	s.line(Line{left, h - bottom, w - right, h - bottom, "#666", 1})
	for _, t := range incidenceTicks {
		s.line(Line{x(t.d), top, x(t.d), h - bottom + 4, "#e5e5e5", 1})
		s.text(x(t.d), h-bottom+16, "middle", t.label)
	}
	steps := collapse(g.Curve, x, y)
	if band := bandPath(steps); band != "" {
		s.Paths = append(s.Paths, Path{D: band, Fill: "#6baed6", Class: "band", Title: g.Course + ": 95% band (log(-log), Greenwood-type variance)"})
	}
	for _, wd := range weekdays {
		s.Paths = append(s.Paths, Path{D: curvePath(collapse(wd.Curve, x, y), x(0), y(0)), Fill: "none",
			Stroke: weekdayColor[mondayIndex(wd.Weekday)], Width: 1, Class: "weekday",
			Title: fmt.Sprintf("%s, %s: %d listings, median %s", g.Course, weekdayLabel(wd.Weekday), wd.N, medianText(wd))})
	}
	s.Paths = append(s.Paths, Path{D: curvePath(steps, x(0), y(0)), Fill: "none", Stroke: "#08306b", Width: 2.5, Class: "datum curve",
		Title: fmt.Sprintf("%s: %d listings, %d still open; median time to book %s", g.Course, g.N, g.Open, medianText(g))})
	return s
}

// step is the curve at the end of one pixel column: the estimate and its band (y coordinates).
type step struct {
	x, f, lo, hi float64
	band         bool
}

// collapse reduces a curve to one step per pixel column (the last point in it: the value in force
// at its end), so a curve of 100k points draws as at most a few hundred steps.
func collapse(pts []store.IncidencePoint, x func(time.Duration) float64, y func(float64) float64) []step {
	var out []step
	for _, p := range pts {
		st := step{x: math.Round(x(p.Time)), f: y(p.Incidence)}
		if !math.IsNaN(p.Lower) && !math.IsNaN(p.Upper) {
			st.band, st.lo, st.hi = true, y(p.Lower), y(p.Upper)
		}
		if n := len(out); n > 0 && out[n-1].x == st.x {
			out[n-1] = st
			continue
		}
		out = append(out, st)
	}
	return out
}

// pathBuf writes an SVG path's commands with one decimal, without fmt (a page draws hundreds).
type pathBuf []byte

func (b *pathBuf) cmd(c byte, v float64) {
	*b = strconv.AppendFloat(append(*b, c), v, 'f', 1, 64)
}

// curvePath is the step function from (x0, y0): flat to each step's x, then up to its value.
func curvePath(steps []step, x0, y0 float64) string {
	b := make(pathBuf, 0, 16+14*len(steps))
	b.cmd('M', x0)
	b = append(b, ' ')
	b = strconv.AppendFloat(b, y0, 'f', 1, 64)
	for _, st := range steps {
		b.cmd('H', st.x)
		b.cmd('V', st.f)
	}
	return string(b)
}

// bandPath is the band over its first run of steps where it is defined: the upper bound forward,
// the lower bound back, both as steps.
func bandPath(steps []step) string {
	a := 0
	for a < len(steps) && !steps[a].band {
		a++
	}
	e := a
	for e < len(steps) && steps[e].band {
		e++
	}
	if e == a {
		return ""
	}
	run := steps[a:e]
	end := run[len(run)-1].x
	if e < len(steps) { // the band ends where the curve's next step begins
		end = steps[e].x
	}
	b := make(pathBuf, 0, 32+28*len(run))
	b.cmd('M', run[0].x)
	b = append(b, ' ')
	b = strconv.AppendFloat(b, run[0].hi, 'f', 1, 64)
	for _, st := range run[1:] {
		b.cmd('H', st.x)
		b.cmd('V', st.hi)
	}
	b.cmd('H', end)
	b.cmd('V', run[len(run)-1].lo)
	for i := len(run) - 1; i > 0; i-- {
		b.cmd('H', run[i].x)
		b.cmd('V', run[i-1].lo)
	}
	b.cmd('H', run[0].x)
	return string(append(b, 'Z'))
}
