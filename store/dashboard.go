package store

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The dashboard's queries (cmd/booking-consumer/internal/dashboard). They read the listing_lifetimes
// projection (booking_lifetimes), the booking_events_hourly rollup and, for one listing, its
// events by key: every page stays a few index lookups or a scan of the projection at 1M events.
var (
	//go:embed queries/dashboard_events_per_hour.sql
	dashEventsPerHourSQL string
	//go:embed queries/dashboard_ingest_totals.sql
	dashIngestTotalsSQL string
	//go:embed queries/dashboard_booked.sql
	dashBookedSQL string
	//go:embed queries/dashboard_listings_count.sql
	dashListingsCountSQL string
	//go:embed queries/dashboard_listings.sql
	dashListingsSQL string
	//go:embed queries/dashboard_listing.sql
	dashListingSQL string
	//go:embed queries/dashboard_listing_events.sql
	dashListingEventsSQL string
	//go:embed queries/dashboard_courses.sql
	dashCoursesSQL string
	//go:embed queries/dashboard_dead_count.sql
	dashDeadCountSQL string
)

// querier is what the lifetimes queries need: a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// ReadOptions are the settings of a ReadOnly transaction.
type ReadOptions struct {
	// Timeout is the statement_timeout of every query (0: the server's default).
	Timeout time.Duration
	// AsOf, when not zero, is the clock of the booking_lifetimes views for the whole transaction
	// (the session setting golf.now, views/lifetimes_clock.sql): statuses, expiries and lifetimes
	// are as of then. Zero: the database's now().
	AsOf time.Time
}

//go:embed queries/dashboard_set_clock.sql
var dashSetClockSQL string

// ReadOnly runs fn in one READ ONLY transaction (one snapshot for every query of a page) with the
// options' statement_timeout and clock, and always rolls it back. The dashboard reads only
// through the returned Reader, so it cannot write, whatever its SQL says.
func (s *Store) ReadOnly(ctx context.Context, o ReadOptions, fn func(*Reader) error) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("begin read-only transaction: %w", interpret(err))
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if o.Timeout > 0 {
		ms := max(o.Timeout.Milliseconds(), 1)
		if _, err := tx.Exec(ctx, fmt.Sprintf("set local statement_timeout = %d", ms)); err != nil {
			return fmt.Errorf("set statement_timeout: %w", interpret(err))
		}
	}
	if !o.AsOf.IsZero() {
		if _, err := tx.Exec(ctx, dashSetClockSQL, o.AsOf.Format(time.RFC3339Nano)); err != nil {
			return fmt.Errorf("set the clock (golf.now): %w", interpret(err))
		}
	}
	return fn(&Reader{tx: tx})
}

// Reader runs the dashboard's read-only queries inside a ReadOnly transaction.
type Reader struct{ tx pgx.Tx }

// Lifetimes is Store.Lifetimes in the reader's transaction: the same SQL and the same rows (the
// dashboard's CSV download and `lifetimes --csv` share it).
func (r *Reader) Lifetimes(ctx context.Context, f LifetimeFilter) ([]Lifetime, error) {
	return queryLifetimes(ctx, r.tx, lifetimesSQL, f.args()...)
}

// Summary is Store.LifetimeSummary in the reader's transaction.
func (r *Reader) Summary(ctx context.Context, f LifetimeFilter) (Summary, error) {
	return lifetimeSummary(ctx, r.tx, f)
}

// ListingSort names the orders the Listings page offers; each maps to a fixed ORDER BY.
var listingOrders = map[string]string{
	"play_date":  "l.play_date %[1]s, l.tee_time %[1]s, l.listing_key",
	"course":     "l.course_name %[1]s, l.play_date, l.tee_time, l.listing_key",
	"source":     "l.source %[1]s, l.play_date, l.tee_time, l.listing_key",
	"status":     "l.status %[1]s, l.play_date, l.tee_time, l.listing_key",
	"opened_at":  "l.opened_at %[1]s, l.listing_key",
	"closed_at":  "l.closed_at %[1]s nulls last, l.listing_key",
	"lifetime":   "l.lifetime %[1]s, l.listing_key",
	"open_price": "l.open_price_krw %[1]s nulls last, l.listing_key",
	"last_price": "l.last_price_krw %[1]s nulls last, l.listing_key",
	"changes":    "l.change_count %[1]s, l.listing_key",
}

// ValidListingSort reports whether ListingsPage accepts sort.
func ValidListingSort(sort string) bool { _, ok := listingOrders[sort]; return ok }

// ListingsPage returns at most limit rows matching f, skipping offset, ordered by sort (a key of
// the fixed list ValidListingSort accepts) ascending or descending.
func (r *Reader) ListingsPage(ctx context.Context, f LifetimeFilter, sort string, desc bool, limit, offset int) ([]Lifetime, error) {
	order, ok := listingOrders[sort]
	if !ok {
		return nil, fmt.Errorf("%w: unknown sort %q", ErrRejected, sort)
	}
	dir := "asc"
	if desc {
		dir = "desc"
	}
	q := strings.Replace(dashListingsSQL, "/*ORDER*/ l.play_date, l.tee_time, l.listing_key", fmt.Sprintf(order, dir), 1)
	return queryLifetimes(ctx, r.tx, q, append(f.args(), limit, offset)...)
}

// Listing returns the booking_lifetimes rows of one listing key (none if it is unknown).
func (r *Reader) Listing(ctx context.Context, key string) ([]Lifetime, error) {
	return queryLifetimes(ctx, r.tx, dashListingSQL, key)
}

// ListingEvent is one stored event of a listing with its Kafka position.
type ListingEvent struct {
	EventID     string
	Type        string
	OccurredAt  time.Time
	PriceKRW    *int64
	Players     *int32
	CloseReason *string
	Topic       *string
	Partition   *int32
	Offset      *int64
	IngestedAt  time.Time
}

// ListingEvents returns every stored event of a listing in the view's order.
func (r *Reader) ListingEvents(ctx context.Context, key string) ([]ListingEvent, error) {
	rows, err := r.tx.Query(ctx, dashListingEventsSQL, key)
	if err != nil {
		return nil, fmt.Errorf("listing events: %w", interpret(err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ListingEvent, error) {
		var e ListingEvent
		err := row.Scan(&e.EventID, &e.Type, &e.OccurredAt, &e.PriceKRW, &e.Players, &e.CloseReason,
			&e.Topic, &e.Partition, &e.Offset, &e.IngestedAt)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("listing events: %w", interpret(err))
	}
	return out, nil
}

// HourCount is the number of events of one type that occurred in one hour.
type HourCount struct {
	Hour      time.Time
	EventType string
	Events    int64
}

// EventsPerHour returns the rollup's counts for the hours in [from, to).
func (r *Reader) EventsPerHour(ctx context.Context, from, to time.Time) ([]HourCount, error) {
	rows, err := r.tx.Query(ctx, dashEventsPerHourSQL, from, to)
	if err != nil {
		return nil, fmt.Errorf("events per hour: %w", interpret(err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (HourCount, error) {
		var h HourCount
		err := row.Scan(&h.Hour, &h.EventType, &h.Events)
		return h, err
	})
	if err != nil {
		return nil, fmt.Errorf("events per hour: %w", interpret(err))
	}
	return out, nil
}

// IngestTotals returns how many events are stored and when the last one was ingested (nil: never).
func (r *Reader) IngestTotals(ctx context.Context) (int64, *time.Time, error) {
	var n int64
	var last *time.Time
	if err := r.tx.QueryRow(ctx, dashIngestTotalsSQL).Scan(&n, &last); err != nil {
		return 0, nil, fmt.Errorf("ingest totals: %w", interpret(err))
	}
	return n, last, nil
}

// BookedListing is what the overview needs of one booked listing.
type BookedListing struct {
	Course      string
	Weekday     time.Weekday // of the play date
	TimeToBook  time.Duration
	LeadDays    int    // play date minus the booking's date (in the zone asked)
	Direction   string // the price before booking: dropped, unchanged, raised or unknown
	ChangeCount int
}

// BookedListings returns every booked listing's overview columns in one scan, LeadDays counted
// in loc.
func (r *Reader) BookedListings(ctx context.Context, loc *time.Location) ([]BookedListing, error) {
	rows, err := r.tx.Query(ctx, dashBookedSQL, loc.String())
	if err != nil {
		return nil, fmt.Errorf("booked listings: %w", interpret(err))
	}
	var out []BookedListing
	var b BookedListing
	var wd int
	var secs float64
	_, err = pgx.ForEachRow(rows, []any{&b.Course, &wd, &secs, &b.LeadDays, &b.Direction, &b.ChangeCount}, func() error {
		b.Weekday, b.TimeToBook = time.Weekday(wd), time.Duration(secs*float64(time.Second))
		out = append(out, b)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("booked listings: %w", interpret(err))
	}
	return out, nil
}

// StatusCounts counts the listings matching f by status (LifetimeSummary's first part).
func (r *Reader) StatusCounts(ctx context.Context, f LifetimeFilter) (map[string]int, error) {
	rows, err := r.tx.Query(ctx, lifetimeStatusCountsSQL, f.args()...)
	if err != nil {
		return nil, fmt.Errorf("count lifetimes by status: %w", interpret(err))
	}
	out := map[string]int{}
	var status string
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&status, &n}, func() error {
		out[status] = n
		return nil
	}); err != nil {
		return nil, fmt.Errorf("count lifetimes by status: %w", interpret(err))
	}
	return out, nil
}

// CountListings counts the rows matching f.
func (r *Reader) CountListings(ctx context.Context, f LifetimeFilter) (int, error) {
	var n int
	if err := r.tx.QueryRow(ctx, dashListingsCountSQL, f.args()...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count listings: %w", interpret(err))
	}
	return n, nil
}

// SourcesAndCourses lists the distinct sources and courses present, for the filters.
func (r *Reader) SourcesAndCourses(ctx context.Context) (sources, courses []string, err error) {
	rows, err := r.tx.Query(ctx, dashCoursesSQL)
	if err != nil {
		return nil, nil, fmt.Errorf("courses: %w", interpret(err))
	}
	var kind, v string
	if _, err := pgx.ForEachRow(rows, []any{&kind, &v}, func() error {
		if kind == "source" {
			sources = append(sources, v)
		} else {
			courses = append(courses, v)
		}
		return nil
	}); err != nil {
		return nil, nil, fmt.Errorf("courses: %w", interpret(err))
	}
	return sources, courses, nil
}

// DeadCount returns the number of dead letters.
func (r *Reader) DeadCount(ctx context.Context) (int64, error) {
	var n int64
	if err := r.tx.QueryRow(ctx, dashDeadCountSQL).Scan(&n); err != nil {
		return 0, fmt.Errorf("count dead letters: %w", interpret(err))
	}
	return n, nil
}

// NewestDeadLetters returns the limit newest dead letters (the `dead list` query).
func (r *Reader) NewestDeadLetters(ctx context.Context, limit int) ([]DeadLetter, error) {
	return listDeadLetters(ctx, r.tx, DeadFilter{}, &limit)
}
