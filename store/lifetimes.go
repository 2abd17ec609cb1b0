package store

import (
	"cmp"
	"context"
	_ "embed"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/golfcrawler/golf-crawler/events"
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
// The listing's attributes (events.Attributes: a round's holes, ...) are embedded whole: each is a
// column of the view, a key of --json and a column of the CSV under its name in the event (its
// json tag), so a new attribute needs no field here, only its column in the view.
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
	Duration      time.Duration `db:"lifetime" json:"lifetime_seconds" csv:"lifetime"` // the lifetime's length: ClosedAt - OpenedAt, or now - OpenedAt while open
	OpenPriceKRW  *int64        `db:"open_price_krw" json:"open_price_krw" csv:"open_price_krw"`
	LastPriceKRW  *int64        `db:"last_price_krw" json:"last_price_krw" csv:"last_price_krw"`
	ChangeCount   int           `db:"change_count" json:"change_count" csv:"changes"` // listing_changed events in the current lifetime
	ReopenCount   int           `db:"reopen_count" json:"reopen_count" csv:"reopens"` // times the listing opened again after a close
	ListingKey    string        `db:"listing_key" json:"listing_key" csv:"listing_key" table:"-"`

	// The listing's attributes, as its last event says (an attribute does not change while it is
	// listed): one column each, after the listing key.
	events.Attributes
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
	// of the play date (Monday first) and by lead time, in that order (the Group constants).
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

// incidenceRow is one row of lifetime_incidence.sql: count listings of one course (interned),
// weekday, lead bucket, lifetime, outcome and reopened-or-not.
type incidenceRow struct {
	course   int32
	weekday  int8 // 0 = Sunday
	lead     int8 // index in LeadBuckets
	reopened bool
	outcome  Outcome
	count    int32
	time     time.Duration
}

func lifetimeSummary(ctx context.Context, q querier, f LifetimeFilter) (Summary, error) {
	rows, err := q.Query(ctx, lifetimeIncidenceSQL, f.args()[:4]...)
	if err != nil {
		return Summary{}, fmt.Errorf("lifetime summary: %w", interpret(err))
	}
	var ls []incidenceRow
	ids := map[string]int32{}
	var names []string
	var course pgtype.DriverBytes // valid until the next row: interned below
	var packed int32
	var r incidenceRow
	if _, err := pgx.ForEachRow(rows, []any{&course, &r.time, &packed, &r.count}, func() error {
		id, ok := ids[string(course)]
		if !ok {
			id = int32(len(names))
			names = append(names, string(course))
			ids[names[id]] = id
		}
		r.course, r.reopened, r.outcome = id, packed%2 == 1, Outcome(packed/2%3)
		r.lead, r.weekday = int8(packed/6%4), int8(packed/24%7)
		ls = append(ls, r)
		return nil
	}); err != nil {
		return Summary{}, fmt.Errorf("lifetime summary: %w", interpret(err))
	}
	return summarise(ls, names, f.Status), nil
}

// outcomeStatus is the status of each Outcome.
var outcomeStatus = [...]string{OutcomeOpen: StatusOpen, OutcomeBooked: StatusBooked, OutcomeExpired: StatusExpired}

// summarise rolls the rows (sorted once by lifetime) up into the groups, each a curve of counts
// by distinct lifetime in ascending order, and runs the estimator over each group.
func summarise(ls []incidenceRow, courses []string, status string) Summary {
	sum := Summary{ByStatus: map[string]int{}}
	slices.SortFunc(ls, func(a, b incidenceRow) int { return cmp.Compare(a.time, b.time) })
	overall := &IncidenceGroup{Kind: GroupOverall}
	byCourse := make([]*IncidenceGroup, len(courses))
	byDay := make([]*IncidenceGroup, 7*len(courses))
	var byLead [len(LeadBuckets)]*IncidenceGroup
	// Each row is at most one point of each of its four groups: its groups, then their curves
	// with room for all their points (growing them point by point copies most of the memory).
	rows := map[*IncidenceGroup]int{overall: len(ls)}
	groupsOf := func(r *incidenceRow) [4]*IncidenceGroup {
		c, d := int(r.course), int(r.course)*7+int(r.weekday)
		if byCourse[c] == nil {
			byCourse[c] = &IncidenceGroup{Kind: GroupCourse, Course: courses[c]}
		}
		if byDay[d] == nil {
			byDay[d] = &IncidenceGroup{Kind: GroupCourseWeekday, Course: courses[c], Weekday: time.Weekday(r.weekday)}
		}
		if byLead[r.lead] == nil {
			byLead[r.lead] = &IncidenceGroup{Kind: GroupLead, Lead: LeadBuckets[r.lead]}
		}
		return [4]*IncidenceGroup{overall, byCourse[c], byDay[d], byLead[r.lead]}
	}
	for i := range ls {
		gs := groupsOf(&ls[i])
		for _, g := range gs[1:] {
			rows[g]++
		}
	}
	for g, n := range rows {
		g.Curve = make([]IncidencePoint, 0, n)
	}
	for i := range ls {
		r := &ls[i]
		n := int(r.count)
		if st := outcomeStatus[r.outcome]; status == "" || st == status {
			sum.ByStatus[st] += n
		}
		for _, g := range groupsOf(r) {
			g.N += n
			switch r.outcome {
			case OutcomeBooked:
				g.Booked += n
			case OutcomeExpired:
				g.Expired += n
			default:
				g.Open += n
			}
			if r.reopened {
				g.Reopened += n
			}
			g.Curve = tally(g.Curve, r.time, r.outcome, n)
		}
	}
	order := make([]int, len(courses))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(courses[a], courses[b]) })
	groups := []*IncidenceGroup{}
	if overall.N > 0 {
		groups = append(groups, overall)
	}
	for _, c := range order {
		groups = append(groups, byCourse[c])
	}
	for _, c := range order {
		for _, wd := range []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday, time.Sunday} {
			if g := byDay[c*7+int(wd)]; g != nil {
				groups = append(groups, g)
			}
		}
	}
	for _, g := range byLead {
		if g != nil {
			groups = append(groups, g)
		}
	}
	sum.Groups = make([]IncidenceGroup, len(groups))
	for i, g := range groups {
		estimate(g.Curve)
		sum.Groups[i] = *g
	}
	return sum
}
