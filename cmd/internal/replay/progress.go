package replay

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// status is one progress sample.
type status struct {
	read, done, failed, invalid int // done: published (dry run: selected)
	bytes                       int64
	dry                         bool
}

// progress shows how a replay is going on Deps.Progress: on a terminal a bar redrawn in place
// ("\r") with the percentage of the input read (when its size is known), the rate and the ETA;
// otherwise one plain line every ProgressEvery, for logs and pipes.
type progress struct {
	w        io.Writer
	terminal bool
	size     int64
	every    time.Duration
	now      func() time.Time
	start    time.Time
	last     time.Time
	drawn    bool
}

func newProgress(d Deps, o Options, start time.Time) *progress {
	return &progress{w: d.Progress, terminal: d.Terminal, size: d.Size, every: o.ProgressEvery,
		now: d.Now, start: start, last: start}
}

// maybe shows s if ProgressEvery has passed since the last display (a terminal bar: a tenth of it).
func (p *progress) maybe(s status) {
	if p.w == nil {
		return
	}
	every := p.every
	if p.terminal {
		every /= 10
	}
	now := p.now()
	if now.Sub(p.last) < every {
		return
	}
	p.last = now
	p.show(s, now)
}

// done shows the final state and ends the bar's line.
func (p *progress) done(s status) {
	if p.w == nil || (!p.drawn && !p.terminal) {
		return // a run shorter than one interval needs no progress line: the report follows
	}
	p.show(s, p.now())
	if p.terminal {
		fmt.Fprintln(p.w)
	}
}

func (p *progress) show(s status, now time.Time) {
	p.drawn = true
	elapsed := now.Sub(p.start)
	rate := 0.0
	if elapsed > 0 {
		rate = float64(s.done) / elapsed.Seconds()
	}
	verb := "published"
	if s.dry {
		verb = "checked"
	}
	frac, eta := -1.0, ""
	if p.size > 0 {
		frac = min(1, float64(s.bytes)/float64(p.size))
		if frac > 0 && frac < 1 {
			left := time.Duration(float64(elapsed) * (1 - frac) / frac)
			eta = left.Round(time.Second).String()
		} else if frac >= 1 {
			eta = "0s"
		}
	}
	if !p.terminal {
		line := fmt.Sprintf("replay: %d lines read, %d %s, %d failed, %d invalid, %.0f events/s", s.read, s.done, verb, s.failed, s.invalid, rate)
		if frac >= 0 {
			line += fmt.Sprintf(", %.0f%% of input, eta %s", frac*100, eta)
		}
		fmt.Fprintln(p.w, line)
		return
	}
	const width = 30
	bar := ""
	if frac >= 0 {
		n := int(frac * width)
		bar = "[" + strings.Repeat("=", n) + strings.Repeat(" ", width-n) + fmt.Sprintf("] %3.0f%% ", frac*100)
	}
	line := fmt.Sprintf("%s%d %s  %d failed  %d invalid  %.0f/s", bar, s.done, verb, s.failed, s.invalid, rate)
	if eta != "" {
		line += "  ETA " + eta
	}
	fmt.Fprintf(p.w, "\r%-90s", line)
}
