package store_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// incidenceGolden is a file of store/testdata/incidence, written by compose/dev/incidence-goldens:
// listing histories and, per group, R's survfit (the estimates and the numbers) and, in
// noties.json, lifelines' AalenJohansenFitter (variance and band; null where lifelines has NaN).
type incidenceGolden struct {
	AsOf     time.Time `json:"as_of"`
	Listings []struct {
		Course   string  `json:"course"`
		PlayDate string  `json:"play_date"`
		TeeTime  string  `json:"tee_time"`
		Status   string  `json:"status"`
		Time     float64 `json:"time"`
		Events   []struct {
			Type   string    `json:"type"`
			At     time.Time `json:"at"`
			Reason string    `json:"reason"`
		} `json:"events"`
	} `json:"listings"`
	Groups []struct {
		Kind    string        `json:"kind"`
		Course  string        `json:"course"`
		Weekday int           `json:"weekday"`
		Lead    string        `json:"lead"`
		Points  []goldenPoint `json:"points"`
	} `json:"groups"`
}

type goldenPoint struct {
	T          float64  `json:"t"`
	NRisk      int      `json:"n_risk"`
	NBooked    int      `json:"n_booked"`
	NExpired   int      `json:"n_expired"`
	NCensor    int      `json:"n_censor"`
	CIF        float64  `json:"cif"`
	CIFExpired float64  `json:"cif_expired"`
	Variance   *float64 `json:"variance"`
	Lower      *float64 `json:"lower"`
	Upper      *float64 `json:"upper"`
}

func readIncidenceGolden(t *testing.T, name string) incidenceGolden {
	t.Helper()
	b, err := os.ReadFile("testdata/incidence/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var g incidenceGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return g
}

// ingestGolden stores the golden's histories through Ingest (the consumer's path).
func ingestGolden(t *testing.T, s *store.Store, g incidenceGolden) {
	t.Helper()
	var batch []store.Message
	for i, l := range g.Listings {
		price := int64(100000)
		lst := events.Listing{Source: "golden", CourseName: l.Course, PlayDate: l.PlayDate, RoundDate: l.PlayDate,
			TeeTime: l.TeeTime, Values: events.Values{PriceKRW: &price, Players: ptr(4)}}
		for j, e := range l.Events {
			crawl := fmt.Sprintf("golden-%d-%d", i, j)
			var ev events.Event
			switch e.Type {
			case "opened":
				ev = events.Opened(lst, crawl, e.At)
			case "closed":
				ev = events.Closed(lst, crawl, e.At, events.CloseReason(e.Reason))
			default:
				t.Fatalf("listing %d: event type %q", i, e.Type)
			}
			batch = append(batch, message(t, ev, len(batch)))
		}
	}
	mustIngest(t, s, batch)
}

// summaryAsOf is LifetimeSummary as of asOf (the golf.now clock, as serve --as-of and
// lifetimes --as-of read).
func summaryAsOf(t *testing.T, s *store.Store, asOf time.Time) store.Summary {
	t.Helper()
	var sum store.Summary
	if err := s.ReadOnly(t.Context(), store.ReadOptions{AsOf: asOf}, func(r *store.Reader) error {
		var err error
		sum, err = r.Summary(t.Context(), store.LifetimeFilter{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return sum
}

func groupKey(kind, course string, weekday int, lead string) string {
	return fmt.Sprintf("%s|%s|%d|%s", kind, course, weekday, lead)
}

// close reports whether got is want to tol, NaN standing for a missing (null) want.
func closeTo(got float64, want *float64, tol float64) bool {
	if want == nil {
		return math.IsNaN(got)
	}
	return math.Abs(got-*want) <= tol
}

// The summary's curves, from histories ingested into PostgreSQL and read through booking_lifetimes
// as of the golden's time, are R's survfit (multi-state) to 1e-9 with the same numbers at risk,
// ties of every kind included ("ties": a 30-minute grid), and lifelines' AalenJohansenFitter's
// variance and band to 1e-6 ("noties": no booking/expiry ties, which lifelines would jitter). The
// histories have reopened listings: only their latest lifetime counts, as in the references.
func TestSummaryMatchesTheReferenceImplementations(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file string
		band bool
	}{{"ties.json", false}, {"noties.json", true}} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			g := readIncidenceGolden(t, tc.file)
			pool := storetest.NewDB(t)
			s := store.New(pool)
			ingestGolden(t, s, g)
			sum := summaryAsOf(t, s, g.AsOf)
			got := map[string]store.IncidenceGroup{}
			for _, gr := range sum.Groups {
				wd := -1
				if gr.Kind == store.GroupCourseWeekday {
					wd = int(gr.Weekday)
				}
				got[groupKey(gr.Kind, gr.Course, wd, gr.Lead)] = gr
			}
			if len(got) != len(g.Groups) {
				t.Errorf("%d groups, the golden has %d", len(got), len(g.Groups))
			}
			points, bands := 0, 0
			for _, want := range g.Groups {
				k := groupKey(want.Kind, want.Course, want.Weekday, want.Lead)
				gr, ok := got[k]
				if !ok {
					t.Errorf("no group %s", k)
					continue
				}
				if gr.N != want.Points[0].NRisk || len(gr.Curve) != len(want.Points) {
					t.Errorf("%s: n %d, %d points; golden n %d, %d points", k, gr.N, len(gr.Curve), want.Points[0].NRisk, len(want.Points))
					continue
				}
				for i, w := range want.Points {
					p := gr.Curve[i]
					if p.Time.Seconds() != w.T || p.AtRisk != w.NRisk || p.Booked != w.NBooked || p.Expired != w.NExpired || p.Censored != w.NCensor ||
						math.Abs(p.Incidence-w.CIF) > 1e-9 || math.Abs(p.ExpiredIncidence-w.CIFExpired) > 1e-9 {
						t.Fatalf("%s point %d: got t=%v at risk %d, %d booked, %d expired, %d censored, CIF %.12g, expired %.12g\n"+
							"R: t=%v at risk %d, %d booked, %d expired, %d censored, CIF %.12g, expired %.12g",
							k, i, p.Time.Seconds(), p.AtRisk, p.Booked, p.Expired, p.Censored, p.Incidence, p.ExpiredIncidence,
							w.T, w.NRisk, w.NBooked, w.NExpired, w.NCensor, w.CIF, w.CIFExpired)
					}
					points++
					if !tc.band {
						continue
					}
					if !closeTo(p.Variance, w.Variance, 1e-6) || !closeTo(p.Lower, w.Lower, 1e-6) || !closeTo(p.Upper, w.Upper, 1e-6) {
						t.Fatalf("%s t=%v: variance %v, band [%v, %v]; lifelines %v, [%v, %v]", k, w.T,
							p.Variance, p.Lower, p.Upper, fmtp(w.Variance), fmtp(w.Lower), fmtp(w.Upper))
					}
					if w.Lower != nil {
						bands++
					}
				}
			}
			t.Logf("%d groups, %d points matched; %d band points", len(g.Groups), points, bands)
			if points < 1000 || tc.band && bands < 500 {
				t.Errorf("only %d points, %d with a band: the golden is too small to say much", points, bands)
			}
		})
	}
}

func fmtp(p *float64) string {
	if p == nil {
		return "NaN"
	}
	return fmt.Sprint(*p)
}

// Five listings with ties, computed by hand (docs/time-to-book.md): at 1 h one booked and one
// expired of 5 at risk; at 2 h one booked and one still open of 3; at 3 h the last one expired.
// F = 0.2, 0.4, 0.4; S = 0.6, 0.4, 0; Var F(1 h) = 1*1*4/5^3 = 0.032, Var F(2 h) = 0.2^2*2/(5*3)
// + 0.032 - 2*0.2*1*1/5^2 + 0.6^2*1*2/3^3 = 0.048; at 3 h every listing at risk ends in an event
// (n = d), where lifelines' variance is NaN (0 times an infinite term): no band.
func TestIncidenceByHand(t *testing.T) {
	h := time.Hour
	obs := []store.Observation{{h, store.OutcomeBooked}, {h, store.OutcomeExpired}, {2 * h, store.OutcomeOpen},
		{2 * h, store.OutcomeBooked}, {3 * h, store.OutcomeExpired}}
	band := func(f, v float64) (lo, hi float64) {
		l, se := math.Log(-math.Log(f)), math.Sqrt(v)/(f*math.Abs(math.Log(f)))
		return math.Exp(-math.Exp(l + 1.959963984540054*se)), math.Exp(-math.Exp(l - 1.959963984540054*se))
	}
	l1, u1 := band(0.2, 0.032)
	l2, u2 := band(0.4, 0.048)
	want := []store.IncidencePoint{
		{Time: h, AtRisk: 5, Booked: 1, Expired: 1, Incidence: 0.2, ExpiredIncidence: 0.2, Survival: 0.6, Variance: 0.032, Lower: l1, Upper: u1},
		{Time: 2 * h, AtRisk: 3, Booked: 1, Censored: 1, Incidence: 0.4, ExpiredIncidence: 0.2, Survival: 0.4, Variance: 0.048, Lower: l2, Upper: u2},
		{Time: 3 * h, AtRisk: 1, Expired: 1, Incidence: 0.4, ExpiredIncidence: 0.6, Survival: 0, Variance: math.NaN(), Lower: math.NaN(), Upper: math.NaN()},
	}
	got := store.Incidence(obs)
	if len(got) != len(want) {
		t.Fatalf("%d points, want %d: %+v", len(got), len(want), got)
	}
	near := func(a, b float64) bool { return math.IsNaN(a) && math.IsNaN(b) || math.Abs(a-b) <= 1e-12 }
	for i, w := range want {
		p := got[i]
		if p.Time != w.Time || p.AtRisk != w.AtRisk || p.Booked != w.Booked || p.Expired != w.Expired || p.Censored != w.Censored ||
			!near(p.Incidence, w.Incidence) || !near(p.ExpiredIncidence, w.ExpiredIncidence) || !near(p.Survival, w.Survival) ||
			!near(p.Variance, w.Variance) || !near(p.Lower, w.Lower) || !near(p.Upper, w.Upper) {
			t.Errorf("point %d = %+v\nwant %+v", i, p, w)
		}
	}
	// The band of 1 h, written out: log(-log 0.2) = 0.4759, se = 0.5557, [0.00837, 0.5819].
	if math.Abs(l1-0.008369) > 5e-6 || math.Abs(u1-0.58186) > 5e-5 {
		t.Errorf("band at 1 h = [%v, %v], by hand [0.008369, 0.58186]", l1, u1)
	}
	if m, ok, never := store.Median(got); ok || !never {
		t.Errorf("median = %v, %v, never %v: want never (60%% expired)", m, ok, never)
	}
}
