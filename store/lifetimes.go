package store

import (
	"cmp"
	"context"
	_ "embed"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

var (
	//go:embed queries/lifetimes.sql
	lifetimesSQL string
	//go:embed queries/lifetime_status_counts.sql
	lifetimeStatusCountsSQL string
	//go:embed queries/lifetime_incidence.sql
	lifetimeIncidenceSQL string
)

// The statuses of a listing in booking_lifetimes.
const (
	StatusOpen    = "open"
	StatusBooked  = "booked"
	StatusExpired = "expired"
)

// LifetimeFilter selects rows of booking_lifetimes. Zero values mean no filter. booking_lifetimes
// is served from the listing_lifetimes projection (indexed by play date, course, source and stored
// status), never from the definition booking_lifetimes_from_events.
type LifetimeFilter struct {
	Source string
	Course string     // course_name, exact
	From   *time.Time // first play date, inclusive (only the date part is used)
	To     *time.Time // last play date, inclusive
	Status string     // StatusOpen, StatusBooked or StatusExpired
}

func (f LifetimeFilter) args() []any {
	return []any{datePtr(f.From), datePtr(f.To), f.Source, f.Course, f.Status}
}

func datePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := t.Format(time.DateOnly)
	return &s
}

// Lifetime is one row of booking_lifetimes: a listing's latest state and its current lifetime
// (since it last (re)opened). Its fields are the view's columns, read by name (db tags); the same
// fields, in this order, are the keys of --json and the columns of the CSV (lifetimes_fields.go).
type Lifetime struct {
	PlayDate      Date          `db:"play_date" json:"play_date" csv:"play_date"`
	TeeTime       TimeOfDay     `db:"tee_time" json:"tee_time" csv:"tee_time"`
	Source        string        `db:"source" json:"source" csv:"source"`
	CourseName    string        `db:"course_name" json:"course_name" csv:"course"`
	CoursePart    string        `db:"course_part" json:"course_part" csv:"part"`
	Status        string        `db:"status" json:"status" csv:"status"`
	OpenedAt      time.Time     `db:"opened_at" json:"opened_at" csv:"opened_at"`
	ClosedAt      *time.Time    `db:"closed_at" json:"closed_at" csv:"closed_at"`
	LastEventType string        `db:"last_event_type" json:"last_event_type"`
	LastEventAt   time.Time     `db:"last_event_at" json:"last_event_at"`
	Lifetime      time.Duration `db:"lifetime" json:"lifetime_seconds" csv:"lifetime"` // ClosedAt - OpenedAt, or now - OpenedAt while open
	OpenPriceKRW  *int64        `db:"open_price_krw" json:"open_price_krw" csv:"open_price_krw"`
	LastPriceKRW  *int64        `db:"last_price_krw" json:"last_price_krw" csv:"last_price_krw"`
	ChangeCount   int           `db:"change_count" json:"change_count" csv:"changes"` // listing_changed events in the current lifetime
	ReopenCount   int           `db:"reopen_count" json:"reopen_count" csv:"reopens"` // times the listing opened again after a close
	ListingKey    string        `db:"listing_key" json:"listing_key" csv:"listing_key"`
}

// Lifetimes returns the rows of booking_lifetimes matching f, by play date, tee time and key.
func (s *Store) Lifetimes(ctx context.Context, f LifetimeFilter) ([]Lifetime, error) {
	return queryLifetimes(ctx, s.pool, lifetimesSQL, f.args()...)
}

// queryLifetimes runs a query selecting booking_lifetimes' columns (select *) and scans its rows
// into Lifetime by column name.
func queryLifetimes(ctx context.Context, q querier, sql string, args ...any) ([]Lifetime, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("query lifetimes: %w", interpret(err))
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[Lifetime])
	if err != nil {
		return nil, fmt.Errorf("read lifetimes: %w", interpret(err))
	}
	return out, nil
}

// Summary aggregates booking_lifetimes for the lifetimes command and the dashboard.
type Summary struct {
	ByStatus map[string]int // listings by status
	// Groups are the cumulative incidence of booking overall, by course, by course and weekday
	// of the play date (Monday first) and by lead time, in that order (GroupKinds).
	Groups []IncidenceGroup
}

// The kinds of IncidenceGroup, in the order Summary lists them.
const (
	GroupOverall       = "overall"
	GroupCourse        = "course"
	GroupCourseWeekday = "course_weekday"
	GroupLead          = "lead"
)

// LeadBuckets name the lead times (from opening to tee time) the summary groups by; a boundary
// belongs to the longer bucket (lifetime_incidence.sql).
var LeadBuckets = [...]string{"< 1 d", "1–7 d", "7–14 d", "> 14 d"}

// IncidenceGroup is the cumulative incidence of booking over one group of listings.
type IncidenceGroup struct {
	Kind    string       // GroupOverall, GroupCourse, GroupCourseWeekday or GroupLead
	Course  string       // GroupCourse, GroupCourseWeekday
	Weekday time.Weekday // of the play date, GroupCourseWeekday
	Lead    string       // one of LeadBuckets, GroupLead
	// N listings: Booked, Expired, Open (still open as of the clock: censored, at risk of a
	// booking), Reopened of them counted by their latest lifetime.
	N, Booked, Expired, Open, Reopened int
	Curve                              []IncidencePoint
}

// Key names the group for people: "all", the course, "course, Mon" or the lead bucket.
func (g IncidenceGroup) Key() string {
	switch g.Kind {
	case GroupCourse:
		return g.Course
	case GroupCourseWeekday:
		return g.Course + ", " + g.Weekday.String()[:3]
	case GroupLead:
		return g.Lead
	}
	return "all"
}

// LifetimeSummary counts the listings matching f by status and gives the cumulative incidence of
// booking of every group (f.Status applies to the counts only: the incidence needs every
// outcome). One scan of booking_lifetimes.
func (s *Store) LifetimeSummary(ctx context.Context, f LifetimeFilter) (Summary, error) {
	return lifetimeSummary(ctx, s.pool, f)
}

// incidenceRow is one listing as lifetime_incidence.sql selects it.
type incidenceRow struct {
	course   string
	weekday  time.Weekday
	lead     int
	reopened bool
	status   string
	obs      Observation
}

func lifetimeSummary(ctx context.Context, q querier, f LifetimeFilter) (Summary, error) {
	rows, err := q.Query(ctx, lifetimeIncidenceSQL, f.args()[:4]...)
	if err != nil {
		return Summary{}, fmt.Errorf("lifetime summary: %w", interpret(err))
	}
	var ls []incidenceRow
	var r incidenceRow
	var wd int
	if _, err := pgx.ForEachRow(rows, []any{&r.course, &wd, &r.status, &r.obs.Time, &r.lead, &r.reopened}, func() error {
		r.weekday, r.obs.Outcome = time.Weekday(wd), outcomeOf(r.status)
		ls = append(ls, r)
		return nil
	}); err != nil {
		return Summary{}, fmt.Errorf("lifetime summary: %w", interpret(err))
	}
	return summarise(ls, f.Status), nil
}

// summarise groups the listings and runs the estimator over each group, sorting them once.
func summarise(ls []incidenceRow, status string) Summary {
	sum := Summary{ByStatus: map[string]int{}}
	slices.SortFunc(ls, func(a, b incidenceRow) int { return cmp.Compare(a.obs.Time, b.obs.Time) })
	type key struct {
		kind, course string
		weekday      time.Weekday
		lead         int
	}
	groups := map[key]*IncidenceGroup{}
	obs := map[key][]Observation{}
	add := func(k key, r *incidenceRow) {
		g := groups[k]
		if g == nil {
			g = &IncidenceGroup{Kind: k.kind, Course: k.course, Weekday: k.weekday}
			if k.kind == GroupLead {
				g.Lead = LeadBuckets[k.lead]
			}
			groups[k] = g
		}
		g.N++
		switch r.obs.Outcome {
		case OutcomeBooked:
			g.Booked++
		case OutcomeExpired:
			g.Expired++
		default:
			g.Open++
		}
		if r.reopened {
			g.Reopened++
		}
		obs[k] = append(obs[k], r.obs)
	}
	for i := range ls {
		r := &ls[i]
		if status == "" || r.status == status {
			sum.ByStatus[r.status]++
		}
		add(key{kind: GroupOverall}, r)
		add(key{kind: GroupCourse, course: r.course}, r)
		add(key{kind: GroupCourseWeekday, course: r.course, weekday: r.weekday}, r)
		add(key{kind: GroupLead, lead: min(max(r.lead, 0), len(LeadBuckets)-1)}, r)
	}
	kindOrder := map[string]int{GroupOverall: 0, GroupCourse: 1, GroupCourseWeekday: 2, GroupLead: 3}
	keys := make([]key, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	monday := func(d time.Weekday) int { return (int(d) + 6) % 7 }
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(kindOrder[a.kind], kindOrder[b.kind]), cmp.Compare(a.course, b.course),
			cmp.Compare(monday(a.weekday), monday(b.weekday)), cmp.Compare(a.lead, b.lead))
	})
	for _, k := range keys {
		g := groups[k]
		g.Curve = Incidence(obs[k])
		sum.Groups = append(sum.Groups, *g)
	}
	return sum
}
