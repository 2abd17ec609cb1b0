package store

// The listing_lifetimes projection: booking_lifetimes answered at interactive
// speed, under the name users query.
//
//	booking_lifetimes_from_events_stored  view (views/): the event-derived columns, from booking_events
//	booking_lifetimes_from_events         view (views/): + expiry and lifetime at query time; THE definition
//	listing_lifetimes                     table: booking_lifetimes_from_events_stored's rows
//	booking_lifetimes                     view over listing_lifetimes with the definition's final
//	                                      layer: what users, the dashboard and lifetimes query
//	booking_lifetimes_fast                alias of booking_lifetimes (its name before the projection served booking_lifetimes), for one release
//
// The definition views are code installed by every migrate (views.Install). The served views
// exist only once the projection does: the build's swap creates them (create or replace, so the
// name booking_lifetimes is never dropped and objects users built on it survive every rebuild), and
// migrate builds the projection before it returns (EnsureProjection).
//
// Ingest refreshes, in the transaction of the insert, the listings whose events it inserted:
// their rows are re-selected from booking_lifetimes_from_events_stored restricted to those keys and upserted
// (projection_upsert.sql), so the projection is always what the view says. Two transactions touching one listing are
// serialised by a transaction-scoped advisory lock per listing (taken in sorted order, and in a
// statement of its own so that the recomputation's snapshot sees whatever the other committed).
//
// A rebuild (RebuildProjection, EnsureProjection on migrate) runs beside the consumer:
//  1. register: under the exclusive (1319, 0) lock (no refresh is between its writes and its
//     commit), set listing_lifetimes_state.rebuilding; from then on every refresh also appends
//     its keys to listing_lifetimes_pending, in its own transaction.
//  2. build listing_lifetimes_next from one snapshot of the events (taken after 1 committed),
//     while Ingest keeps updating the old table (readers keep seeing fresh rows).
//  3. catch up: drain pending and recompute those keys into the new table, until few remain.
//  4. swap, in one transaction holding the exclusive (1319, 0) lock: drain the last pending keys,
//     recompute them, rename the new table in, re-point booking_lifetimes (and its alias) at it,
//     drop the old table, clear rebuilding, record the definitions' hash. Ingests that
//     inserted meanwhile wait for that lock before refreshing, then refresh the new table.
//
// Every key touched after the build's snapshot is therefore either in pending (drained in 3 or
// 4) or refreshed after the swap, into the new table.

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/golfcrawler/golf-crawler/views"
)

var (
	//go:embed queries/projection_build.sql
	projectionBuildSQL string
	//go:embed queries/projection_swap.sql
	projectionSwapSQL string
	//go:embed queries/projection_swap_finish.sql
	projectionSwapFinishSQL string
	//go:embed queries/projection_delete.sql
	projectionDeleteSQL string
	//go:embed queries/projection_catchup.sql
	projectionCatchUpSQL string
	//go:embed queries/projection_triggers.sql
	projectionTriggersSQL string
)

// servedViewSQL creates (or re-points) booking_lifetimes, the served view: the definition's own
// final layer (views.ClockLayer) over the listing_lifetimes projection. Every projection
// (re)build runs it in its swap.
var servedViewSQL = views.ClockLayer("booking_lifetimes", "listing_lifetimes")

// ProjectionSources are the SQL files that define the projection besides the views: with
// views.Sources, what ProjectionHash covers (storetest names its template databases after them).
var ProjectionSources = []string{servedViewSQL, projectionBuildSQL, projectionSwapSQL,
	projectionSwapFinishSQL, projectionTriggersSQL}

// ProjectionHash is the hash of the definitions the projection is built from (the views and the
// projection's own DDL). EnsureProjection rebuilds when the stored one differs. Their comments are
// left out (sqlWithoutComments): a rebuild reads every event, and a comment changes nothing the
// database runs, so editing one must not rebuild a deployment's projection.
func ProjectionHash() string {
	return projectionHash(append(slices.Clone(views.Sources), ProjectionSources...))
}

func projectionHash(sources []string) string {
	h := sha256.New()
	for _, s := range sources {
		s = sqlWithoutComments(s)
		fmt.Fprintf(h, "%d\x00", len(s))
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// sqlWithoutComments is sql without its -- comments, outside quoted strings and identifiers
// (inside a dollar-quoted function body a -- is a comment too), each line's trailing white space
// trimmed and the lines left blank dropped.
func sqlWithoutComments(sql string) string {
	var b strings.Builder
	var quote byte // ' or " while inside a quoted string or identifier
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0 // a doubled quote closes and reopens: the same text
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
			if i == len(sql) {
				continue
			}
			c = '\n'
		}
		b.WriteByte(c)
	}
	lines := strings.Split(b.String(), "\n")
	out := lines[:0]
	for _, l := range lines {
		if l = strings.TrimRight(l, " \t\r"); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// rebuildLockSQL takes the session-level advisory lock (1319, 1) a rebuild holds from start to
// end: one rebuild at a time.
const rebuildLockSQL = "select pg_advisory_lock(1319, 1)"

// abandonRebuildSQL undoes what a failed (or killed) rebuild left behind.
const abandonRebuildSQL = `update listing_lifetimes_state set rebuilding = false;
	delete from listing_lifetimes_pending; drop table if exists listing_lifetimes_next`

// ErrRebuildRunning means another rebuild of the projection holds the rebuild lock.
var ErrRebuildRunning = errors.New("another rebuild of listing_lifetimes is running")

func distinct(keys []string) []string {
	keys = slices.Clone(keys)
	slices.Sort(keys)
	return slices.Compact(keys)
}

// projectionErr interprets an insert's error. A data exception or integrity violation raised
// inside the projection's trigger (its PL/pgSQL context names a listing_lifetimes_ function) is
// never the batch's data's fault, so it must not read as ErrRejected: the batch would be
// dead-lettered row by row. Such errors lose their code and pause the stream loudly instead.
func projectionErr(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && strings.Contains(pgErr.Where, "listing_lifetimes_") && errors.Is(interpret(err), ErrRejected) {
		return fmt.Errorf("refresh listing_lifetimes: %v", err)
	}
	return interpret(err)
}

// RebuildStats says what a rebuild did.
type RebuildStats struct {
	Listings  int64         // rows in the new table
	CaughtUp  int           // listings recomputed after the build because Ingest touched them
	Build     time.Duration // the build from one snapshot (step 2)
	Swap      time.Duration // the final transaction (step 4), during which refreshes wait
	Total     time.Duration
	ViewHash  string
	UpToDate  bool // EnsureProjection only: nothing to do
	FirstTime bool // there was no listing_lifetimes table before
}

// RebuildProjection rebuilds listing_lifetimes from the events into a new table and swaps it in,
// while Ingest keeps going (see the package comment above). It fails with ErrRebuildRunning if
// another rebuild runs.
func (s *Store) RebuildProjection(ctx context.Context) (RebuildStats, error) {
	return s.rebuild(ctx, false)
}

// EnsureProjection builds listing_lifetimes if it does not exist or was built from other
// definitions than the installed ones (ProjectionHash); migrate runs it after the views. Several
// processes may run it at once: they take turns, and the later ones find it up to date.
func (s *Store) EnsureProjection(ctx context.Context) (RebuildStats, error) {
	return s.rebuild(ctx, true)
}

func (s *Store) rebuild(ctx context.Context, onlyIfStale bool) (st RebuildStats, err error) {
	start := time.Now()
	st.ViewHash = ProjectionHash()
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return st, fmt.Errorf("rebuild listing_lifetimes: acquire connection: %w", err)
	}
	defer c.Release()
	conn := c.Conn()
	if err := lockRebuild(ctx, conn, onlyIfStale); err != nil {
		return st, err
	}
	defer func() {
		if uerr := unlockRebuild(ctx, conn); uerr != nil && err == nil {
			err = uerr
		}
	}()
	if done, err := upToDate(ctx, conn, onlyIfStale, &st); done || err != nil {
		return st, err
	}

	if err := register(ctx, conn); err != nil {
		return st, err
	}
	defer func() {
		if err != nil { // stop the logging; the next rebuild starts over
			_, _ = conn.Exec(context.WithoutCancel(ctx), abandonRebuildSQL)
		}
	}()
	t := time.Now()
	if _, err := conn.Exec(ctx, projectionBuildSQL); err != nil {
		return st, fmt.Errorf("rebuild listing_lifetimes: build: %w", err)
	}
	st.Build = time.Since(t)
	if err := catchUpWhileIngesting(ctx, conn, &st); err != nil {
		return st, err
	}
	t = time.Now()
	if err := finalSwap(ctx, conn, &st); err != nil {
		return st, err
	}
	st.Swap = time.Since(t)
	if err := conn.QueryRow(ctx, "select count(*) from listing_lifetimes").Scan(&st.Listings); err != nil {
		return st, fmt.Errorf("rebuild listing_lifetimes: count: %w", err)
	}
	if _, err := conn.Exec(ctx, "analyze listing_lifetimes"); err != nil {
		return st, fmt.Errorf("rebuild listing_lifetimes: analyze: %w", err)
	}
	st.Total = time.Since(start)
	return st, nil
}

// lockRebuild takes the rebuild's session lock (1319, 1) on conn: waiting for it (onlyIfStale,
// EnsureProjection: several migrates take turns) or failing with ErrRebuildRunning.
func lockRebuild(ctx context.Context, conn *pgx.Conn, wait bool) error {
	if wait {
		if _, err := conn.Exec(ctx, rebuildLockSQL); err != nil {
			return fmt.Errorf("rebuild listing_lifetimes: lock: %w", err)
		}
		return nil
	}
	var ok bool
	if err := conn.QueryRow(ctx, "select pg_try_advisory_lock(1319, 1)").Scan(&ok); err != nil {
		return fmt.Errorf("rebuild listing_lifetimes: lock: %w", err)
	}
	if !ok {
		return ErrRebuildRunning
	}
	return nil
}

// unlockRebuild releases the session lock; a connection that may still hold it is closed rather
// than returned to the pool.
func unlockRebuild(ctx context.Context, conn *pgx.Conn) error {
	if _, err := conn.Exec(context.WithoutCancel(ctx), "select pg_advisory_unlock(1319, 1)"); err != nil {
		conn.Close(context.WithoutCancel(ctx)) //nolint:errcheck // a connection that may hold the lock must not go back
		return fmt.Errorf("rebuild listing_lifetimes: unlock: %w", err)
	}
	return nil
}

// upToDate reads the projection's state into st and says whether there is nothing to do
// (onlyIfStale and the table was built from the installed definitions). It clears what a rebuild
// that died halfway left behind (the caller holds its lock).
func upToDate(ctx context.Context, conn *pgx.Conn, onlyIfStale bool, st *RebuildStats) (bool, error) {
	var stored string
	var exists, rebuilding bool
	if err := conn.QueryRow(ctx, `select view_hash, to_regclass('listing_lifetimes') is not null, rebuilding
		from listing_lifetimes_state`).Scan(&stored, &exists, &rebuilding); err != nil {
		return false, fmt.Errorf("rebuild listing_lifetimes: read state: %w", err)
	}
	st.FirstTime = !exists
	if !onlyIfStale || !exists || stored != st.ViewHash {
		return false, nil
	}
	st.UpToDate = true
	if rebuilding { // stop Ingest logging keys for the dead rebuild
		if _, err := conn.Exec(ctx, abandonRebuildSQL); err != nil {
			return true, fmt.Errorf("rebuild listing_lifetimes: clear an abandoned rebuild: %w", err)
		}
	}
	return true, nil
}

// register is step 1: under the exclusive (1319, 0) lock, mark the rebuild in progress; from the
// commit on, refreshes log their keys in listing_lifetimes_pending.
func register(ctx context.Context, conn *pgx.Conn) error {
	if err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "select pg_advisory_xact_lock(1319, 0)"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "update listing_lifetimes_state set rebuilding = true; delete from listing_lifetimes_pending")
		return err
	}); err != nil {
		return fmt.Errorf("rebuild listing_lifetimes: register: %w", err)
	}
	return nil
}

// catchUpWhileIngesting is step 3: drain pending into the new table while ingest runs, until a
// round finds few keys (at most 10 rounds).
func catchUpWhileIngesting(ctx context.Context, conn *pgx.Conn, st *RebuildStats) error {
	for range 10 {
		var n int
		if err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			var err error
			n, err = catchUp(ctx, tx)
			return err
		}); err != nil {
			return fmt.Errorf("rebuild listing_lifetimes: catch up: %w", err)
		}
		st.CaughtUp += n
		if n < 1000 {
			break
		}
	}
	return nil
}

// finalSwap is step 4, one transaction under the exclusive (1319, 0) lock: the last pending keys,
// the swap, and the state (not rebuilding, the definitions' hash).
func finalSwap(ctx context.Context, conn *pgx.Conn, st *RebuildStats) error {
	if err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "select pg_advisory_xact_lock(1319, 0)"); err != nil {
			return err
		}
		n, err := catchUp(ctx, tx)
		if err != nil {
			return err
		}
		st.CaughtUp += n
		if err := swap(ctx, tx); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "update listing_lifetimes_state set rebuilding = false, view_hash = $1", st.ViewHash)
		return err
	}); err != nil {
		return fmt.Errorf("rebuild listing_lifetimes: swap: %w", err)
	}
	return nil
}

// swap puts listing_lifetimes_next in place of listing_lifetimes and points the served views at
// it, inside the rebuild's final transaction. booking_lifetimes is re-pointed with create or
// replace, so it keeps its identity and the objects users built on it. Only when the definition's
// columns changed incompatibly (a column dropped, renamed or retyped: 42P16, 42804) is it dropped
// and created anew, RESTRICT: with objects depending on it the rebuild fails with PostgreSQL's
// list of them and the old projection stays.
func swap(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, projectionSwapSQL); err != nil {
		return err
	}
	err := pgx.BeginFunc(ctx, tx, func(sp pgx.Tx) error {
		_, err := sp.Exec(ctx, servedViewSQL)
		return err
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "42P16" || pgErr.Code == "42804") {
		if _, err := tx.Exec(ctx, "drop view if exists booking_lifetimes_fast; drop view booking_lifetimes"); err != nil {
			return fmt.Errorf("the columns of booking_lifetimes changed (%s), and it cannot be re-created: %w", pgErr.Message, err)
		}
		_, err = tx.Exec(ctx, servedViewSQL)
	}
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, projectionSwapFinishSQL); err != nil {
		return err
	}
	triggers, err := projectionTriggers(ctx, tx)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, triggers)
	return err
}

// catchUp drains listing_lifetimes_pending and recomputes those listings in
// listing_lifetimes_next, in tx. No lock per listing: Ingest never writes the new table.
func catchUp(ctx context.Context, tx pgx.Tx) (int, error) {
	rows, _ := tx.Query(ctx, "delete from listing_lifetimes_pending returning listing_key")
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(keys) == 0 {
		return 0, err
	}
	keys = distinct(keys)
	for _, q := range []string{projectionDeleteSQL, projectionCatchUpSQL} {
		if _, err := tx.Exec(ctx, q, keys); err != nil {
			return 0, err
		}
	}
	return len(keys), nil
}
