package store

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

var (
	//go:embed queries/lifetimes.sql
	lifetimesSQL string
	//go:embed queries/lifetime_status_counts.sql
	lifetimeStatusCountsSQL string
	//go:embed queries/lifetime_time_to_book.sql
	lifetimeTimeToBookSQL string
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

// Summary aggregates booking_lifetimes for the lifetimes command.
type Summary struct {
	ByStatus   map[string]int // listings by status
	TimeToBook []TimeToBook   // by course then weekday
}

// TimeToBook is the median lifetime of booked listings of one course on one weekday.
type TimeToBook struct {
	Course  string
	Weekday time.Weekday // of the play date
	Booked  int
	Median  time.Duration
}

// LifetimeSummary counts the listings matching f by status and gives the median time to book by
// course and weekday (f.Status does not apply to the latter: it is about booked listings).
func (s *Store) LifetimeSummary(ctx context.Context, f LifetimeFilter) (Summary, error) {
	return lifetimeSummary(ctx, s.pool, f)
}

func lifetimeSummary(ctx context.Context, q querier, f LifetimeFilter) (Summary, error) {
	sum := Summary{ByStatus: map[string]int{}}
	rows, err := q.Query(ctx, lifetimeStatusCountsSQL, f.args()...)
	if err != nil {
		return Summary{}, fmt.Errorf("count lifetimes by status: %w", interpret(err))
	}
	var status string
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&status, &n}, func() error {
		sum.ByStatus[status] = n
		return nil
	}); err != nil {
		return Summary{}, fmt.Errorf("count lifetimes by status: %w", interpret(err))
	}

	rows, err = q.Query(ctx, lifetimeTimeToBookSQL, f.args()[:4]...)
	if err != nil {
		return Summary{}, fmt.Errorf("median time to book: %w", interpret(err))
	}
	sum.TimeToBook, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (TimeToBook, error) {
		var b TimeToBook
		var wd int
		var us int64
		err := row.Scan(&b.Course, &wd, &b.Booked, &us)
		b.Weekday, b.Median = time.Weekday(wd), time.Duration(us)*time.Microsecond
		return b, err
	})
	if err != nil {
		return Summary{}, fmt.Errorf("median time to book: %w", interpret(err))
	}
	return sum, nil
}
