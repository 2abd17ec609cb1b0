package store

import (
	"math"
	"time"
)

// The cumulative incidence of booking (docs/time-to-book.md): how long a listing stays open before
// it is booked, counting the listings still open and the ones that expired. Each listing is one
// observation, its latest lifetime (booking_lifetimes' row; a reopened listing counts from its last
// reopening): booked at its lifetime (the event of interest), expired at its lifetime (the
// competing event), or still open, censored at its lifetime as of the clock.

// Outcome is how a lifetime ended, for the estimator.
type Outcome uint8

// The outcomes of a lifetime: booked and expired are the two events, open is censored. Their
// values are lifetime_incidence.sql's.
const (
	OutcomeOpen Outcome = iota
	OutcomeBooked
	OutcomeExpired
)

// Observation is one listing's lifetime and how it ended.
type Observation struct {
	Time    time.Duration
	Outcome Outcome
}

// IncidencePoint is the curve at one distinct lifetime: the Aalen-Johansen estimate right after
// it, and what happened at it.
type IncidencePoint struct {
	Time     time.Duration
	AtRisk   int // listings whose lifetime is Time or longer
	Booked   int // booked at Time
	Expired  int // expired at Time
	Censored int // still open, with this lifetime
	// Incidence is the cumulative incidence of booking by Time; ExpiredIncidence that of expiry;
	// Survival = 1 - both, the share still open (Kaplan-Meier over either event).
	Incidence, ExpiredIncidence, Survival float64
	// Variance is the Greenwood-type (delta method) variance of Incidence, lifelines'
	// AalenJohansenFitter's; Lower and Upper its pointwise 95% band on the log(-log) scale.
	// Lower and Upper are NaN where the band is undefined: before the first booking (Incidence 0,
	// Variance 0) and, with Variance, from a time where every listing at risk ended in an event
	// (n = d: lifelines' 0 times an infinite term).
	Variance, Lower, Upper float64
}

// z975 is the 97.5% quantile of the standard normal distribution (scipy.stats.norm.ppf(0.975),
// what lifelines uses for a 95% band).
const z975 = 1.959963984540054

// Incidence is the Aalen-Johansen estimate of the cumulative incidence of booking over obs, sorted
// by Time (ascending): one point per distinct time (see estimate).
func Incidence(obs []Observation) []IncidencePoint {
	pts := make([]IncidencePoint, 0, len(obs)/2+1)
	for _, o := range obs {
		pts = tally(pts, o.Time, o.Outcome, 1)
	}
	estimate(pts)
	return pts
}

// tally adds count listings with lifetime t and outcome o to pts, the counts of a group by
// distinct time in ascending order, and returns it: t is pts' last time or after it.
func tally(pts []IncidencePoint, t time.Duration, o Outcome, count int) []IncidencePoint {
	if len(pts) == 0 || pts[len(pts)-1].Time != t {
		pts = append(pts, IncidencePoint{Time: t})
	}
	p := &pts[len(pts)-1]
	switch o {
	case OutcomeBooked:
		p.Booked += count
	case OutcomeExpired:
		p.Expired += count
	default:
		p.Censored += count
	}
	return pts
}

// estimate fills in the Aalen-Johansen estimate of every point of pts, one per distinct time in
// ascending order with its Booked, Expired and Censored counts: AtRisk, the incidences, the
// survival and the band. At one time, the events (bookings and expiries both) come before the
// censorings: a listing still open at that lifetime is at risk at it. Its variance is lifelines'
// (docs/time-to-book.md):
//
//	Var F(t) = sum over t_i <= t of (F(t) - F(t_i))^2 d_i / (n_i (n_i - d_i))
//	         + S(t_i-)^2 b_i (n_i - b_i) / n_i^3
//	         - 2 (F(t) - F(t_i)) S(t_i-) b_i / n_i^2
//
// with n_i at risk, d_i events of either kind and b_i bookings at t_i, S(t_i-) the Kaplan-Meier
// survival just before t_i; the sums are expanded in F(t) so the whole curve is one pass.
func estimate(pts []IncidencePoint) {
	n := 0
	for i := range pts {
		n += pts[i].Booked + pts[i].Expired + pts[i].Censored
	}
	s, f, g := 1.0, 0.0, 0.0
	// Running sums: a = d/(n(n-d)), then F_i a, F_i^2 a; c = S- b/n^2 and F_i c; q the middle term.
	var sa, sfa, sffa, sq, sc, sfc float64
	undefined := false // some n_i = d_i: the first term is infinite from there on
	for i := range pts {
		p := &pts[i]
		p.AtRisk = n
		nn, b, d := float64(n), float64(p.Booked), float64(p.Booked+p.Expired)
		if d > 0 {
			prev := s
			f += prev * b / nn
			g += prev * float64(p.Expired) / nn
			s = prev * (1 - d/nn)
			if d == nn {
				undefined = true
			} else {
				a := d / (nn * (nn - d))
				sa, sfa, sffa = sa+a, sfa+f*a, sffa+f*f*a
			}
			c := prev * b / (nn * nn)
			sq += prev * prev * b * (nn - b) / (nn * nn * nn)
			sc, sfc = sc+c, sfc+f*c
		}
		p.Incidence, p.ExpiredIncidence, p.Survival = f, g, s
		p.Variance, p.Lower, p.Upper = math.NaN(), math.NaN(), math.NaN()
		if !undefined {
			v := f*f*sa - 2*f*sfa + sffa + sq - 2*(f*sc-sfc)
			p.Variance = v
			if f > 0 && f < 1 && v >= 0 {
				l := math.Log(-math.Log(f))
				se := math.Sqrt(v) / (f * math.Abs(math.Log(f)))
				p.Lower, p.Upper = math.Exp(-math.Exp(l+z975*se)), math.Exp(-math.Exp(l-z975*se))
			}
		}
		n -= p.Booked + p.Expired + p.Censored
	}
}

// At is the curve in force at t: its last point at or before t, or, before the first point, the
// start (no incidence, survival 1, everyone at risk). ok is false after the last point when some
// listings were still open then: the curve is undetermined beyond it.
func At(pts []IncidencePoint, t time.Duration) (IncidencePoint, bool) {
	lo, hi := 0, len(pts)
	for lo < hi {
		m := (lo + hi) / 2
		if pts[m].Time <= t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		p := IncidencePoint{Survival: 1}
		if len(pts) > 0 {
			p.AtRisk = pts[0].AtRisk
		}
		return p, true
	}
	p := pts[lo-1]
	if lo == len(pts) && t > p.Time && p.Survival > 0 {
		return p, false
	}
	return p, true
}

// Median is the first time the incidence of booking reaches 0.5. ok false: it never does; never
// says whether it cannot any more (more than half expired, or every listing ended below 0.5) or
// it may still, through the listings still open.
func Median(pts []IncidencePoint) (t time.Duration, ok, never bool) {
	for _, p := range pts {
		if p.Incidence >= 0.5 {
			return p.Time, true, false
		}
	}
	if len(pts) == 0 {
		return 0, false, false
	}
	last := pts[len(pts)-1]
	return 0, false, last.ExpiredIncidence > 0.5 || last.Survival == 0
}

// BookedWithin is the cumulative incidence of booking by d (ok false: undetermined, see At).
func (g IncidenceGroup) BookedWithin(d time.Duration) (float64, bool) {
	p, ok := At(g.Curve, d)
	return p.Incidence, ok
}

// ExpiredUnbooked is the cumulative incidence of expiry at the end of the curve: the estimated
// share of the listings that expire without a booking (by the longest lifetime observed).
func (g IncidenceGroup) ExpiredUnbooked() float64 {
	if len(g.Curve) == 0 {
		return 0
	}
	return g.Curve[len(g.Curve)-1].ExpiredIncidence
}

// AtRiskAt is the number of listings at risk at t: those whose lifetime is t or longer.
func AtRiskAt(pts []IncidencePoint, t time.Duration) int {
	for _, p := range pts {
		if p.Time >= t {
			return p.AtRisk
		}
	}
	return 0
}
