package liteclaims

import (
	"context"
	"database/sql"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/internal/diskfull"
)

var (
	//go:embed queries/close.sql
	closeSQL string
	//go:embed queries/claim_rows.sql
	claimRowsSQL string
	//go:embed queries/claim_backlog_rows.sql
	claimBacklogRowsSQL string
	//go:embed queries/fingerprint.sql
	fingerprintSQL string
	//go:embed queries/pick.sql
	pickSQL string
	//go:embed queries/sendkey.sql
	sendKeySQL string
	//go:embed queries/attempt.sql
	attemptSQL string
	//go:embed queries/finish.sql
	finishSQL string
	//go:embed queries/retry.sql
	retrySQL string
	//go:embed queries/list.sql
	listSQL string
	//go:embed queries/prune.sql
	pruneSQL string
	//go:embed queries/resend.sql
	resendSQL string
	//go:embed queries/resolve.sql
	resolveSQL string
	//go:embed queries/pending.sql
	pendingSQL string
)

func nanos(t time.Time) int64 { return t.UnixNano() }

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// keysJSON is a group's claim keys as the JSON array the queries' json_each reads.
func keysJSON(g notify.Group) string {
	b, _ := json.Marshal(g.Keys())
	return string(b)
}

// tx runs fn in one write transaction (BEGIN IMMEDIATE: _txlock), committed (synced) on nil.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// failed is the error of operation op on the database: named by its file and, when the disk (or
// SQLite's file) is full, said so: a transaction that failed on a full disk was rolled back and
// the file is whole, so nothing in it is called corrupt.
func (s *Store) failed(op string, err error) error {
	if diskfull.Is(err) {
		return fmt.Errorf("alerts database %s: %s: disk full (free space on its file system; nothing of this transaction was kept): %w", s.path, op, err)
	}
	return fmt.Errorf("alerts database %s: %s: %w", s.path, op, err)
}

// Claim implements notify.ClaimStore: the closes, the fingerprints, the resolutions of pending
// claims, then the claims, in one transaction.
func (s *Store) Claim(ctx context.Context, b notify.ClaimBatch) ([]notify.Claimed, error) {
	now, maxAge := b.Now, b.MaxAge
	if now.IsZero() {
		now = s.now()
	}
	if maxAge <= 0 {
		maxAge = notify.DefaultMaxAge
	}
	if err := ctx.Err(); err != nil {
		return nil, s.failed("claim", err)
	}
	// Once begun, the transaction runs to its commit or its first error, not to ctx's end: it is
	// short and bounded by BusyTimeout, and a statement under a cancellable context costs the
	// driver a goroutine watching it (a tenth of a site crawl's claim CPU at 1,000 claims).
	ctx = context.WithoutCancel(ctx)
	// The claim statements are prepared before the transaction: the one connection is the
	// transaction's once it begins.
	for cs := b.Claims; len(cs) > 0; {
		n := chunkLen(cs)
		if _, err := s.claimStmt(ctx, claimShape{cs[0].Backlog, n}); err != nil {
			return nil, s.failed("claim", err)
		}
		cs = cs[n:]
	}
	var out []notify.Claimed
	err := s.tx(ctx, func(tx *sql.Tx) error {
		out = nil
		if len(b.Closes) > 0 {
			closeStmt, err := tx.PrepareContext(ctx, closeSQL)
			if err != nil {
				return fmt.Errorf("record close: %w", err)
			}
			defer closeStmt.Close()
			for _, c := range b.Closes {
				if _, err := closeStmt.ExecContext(ctx, c.ListingKey, nanos(c.At)); err != nil {
					return fmt.Errorf("record close: %w", err)
				}
			}
		}
		for _, f := range b.Fingerprints {
			if _, err := tx.ExecContext(ctx, fingerprintSQL, f.Watch, f.Source, f.Fingerprint, nanos(now)); err != nil {
				return fmt.Errorf("record fingerprint of %s: %w", f.Watch, err)
			}
		}
		if err := resolve(ctx, tx, b.Resolve, now); err != nil {
			return err
		}
		var err error
		out, err = s.claimRows(ctx, tx, b.Claims, now, maxAge)
		return err
	})
	if err != nil {
		return nil, s.failed("claim", err)
	}
	return out, nil
}

// resolve applies rs to the claims still pending.
func resolve(ctx context.Context, tx *sql.Tx, rs []notify.Resolve, now time.Time) error {
	if len(rs) == 0 {
		return nil
	}
	stmt, err := tx.PrepareContext(ctx, resolveSQL)
	if err != nil {
		return fmt.Errorf("resolve pending claims: %w", err)
	}
	defer stmt.Close()
	for _, r := range rs {
		if _, err := stmt.ExecContext(ctx, r.Key.String(), string(r.Status), r.Reason, nanos(now)); err != nil {
			return fmt.Errorf("resolve pending claim %s: %w", r.Key, err)
		}
	}
	return nil
}

// claimChunk is how many matches one claim statement holds (10 parameters each, far under SQLite's
// limit of 32766).
const claimChunk = 500

// claimRows claims cs in statements of up to claimChunk matches each, and returns the claims made
// in cs's order. One statement per match was most of a site's first crawl's claim transaction
// (each paid for its own statement journal, RETURNING table and cursors; BenchmarkCrawlAlertsHook).
// A statement holds a run of plain or of backlog claims, in cs's order, so that a backlog claim
// sees the plain claims before it as it did; and since a statement does not see its own rows, one
// holds no two backlog matches of a watch, channel and listing (chunkLen).
//
// The statements are prepared once per store and shape (plain or backlog, a chunk's length) and
// reused by every transaction (the one connection keeps them): preparing a statement of 100 rows
// was a tenth of a site crawl's claim.
func (s *Store) claimRows(ctx context.Context, tx *sql.Tx, cs []notify.Claim, now time.Time, maxAge time.Duration) ([]notify.Claimed, error) {
	inTx := map[claimShape]*sql.Stmt{}
	defer func() {
		for _, st := range inTx {
			st.Close()
		}
	}()
	var out []notify.Claimed
	payloads := map[*events.Event]string{} // an event matched by several watches is encoded once
	for len(cs) > 0 {
		chunk := cs[:chunkLen(cs)]
		cs = cs[len(chunk):]
		sh := claimShape{chunk[0].Backlog, len(chunk)}
		stmt := inTx[sh]
		if stmt == nil {
			s.stmtMu.Lock()
			prepared := s.stmts[sh]
			s.stmtMu.Unlock()
			if prepared == nil { // Claim prepares every shape first: preparing here would wait for the transaction's own connection
				return nil, fmt.Errorf("claim: no statement prepared for %d rows", sh.rows)
			}
			stmt = tx.StmtContext(ctx, prepared)
			inTx[sh] = stmt
		}
		args := make([]any, 2, 2+10*len(chunk))
		args[0], args[1] = nanos(now), nanos(now)
		for _, c := range chunk {
			e := c.Event
			// events.Encode, not json.Marshal: the same bytes, without encoding/json checking and
			// compacting what Event.MarshalJSON wrote.
			payload, ok := payloads[e]
			if !ok {
				b, err := events.Encode(*e)
				if err != nil {
					return nil, err
				}
				payload = string(b)
				payloads[e] = payload
			}
			reason := ""
			if !c.Backlog && e.OccurredAt.Before(now.Add(-maxAge)) {
				reason = notify.ReasonStale
			}
			args = append(args, c.Key.String(), c.Watch, c.Channel, e.EventID.String(), e.CrawlID, e.ListingKey,
				nanos(e.OccurredAt), payload, reason, c.Pending)
		}
		made, err := scanMade(stmt.QueryContext(ctx, args...))
		if err != nil {
			return nil, fmt.Errorf("claim %s and %d more: %w", chunk[0].Key, len(chunk)-1, err)
		}
		for _, c := range chunk {
			if m, ok := made[c.Key.String()]; ok {
				out = append(out, notify.Claimed{Key: c.Key, Channel: c.Channel, Status: notify.Status(m[0]), Reason: m[1]})
			}
		}
	}
	return out, nil
}

// claimShape is the shape of a claim statement: plain or backlog rows, and how many.
type claimShape struct {
	backlog bool
	rows    int
}

// claimStmt is the store's prepared claim statement of shape sh, prepared at its first use (never
// inside a transaction: Claim prepares its shapes before it begins).
func (s *Store) claimStmt(ctx context.Context, sh claimShape) (*sql.Stmt, error) {
	s.stmtMu.Lock()
	defer s.stmtMu.Unlock()
	if st := s.stmts[sh]; st != nil {
		return st, nil
	}
	q := claimRowsSQL
	if sh.backlog {
		q = claimBacklogRowsSQL
	}
	st, err := s.db.PrepareContext(ctx, strings.Replace(q, "/*rows*/", valuesList(sh.rows), 1))
	if err != nil {
		return nil, err
	}
	if s.stmts == nil {
		s.stmts = map[claimShape]*sql.Stmt{}
	}
	s.stmts[sh] = st
	return st, nil
}

// chunkLen is how many of cs (not empty) one claim statement takes: up to claimChunk of the kind
// of cs[0] (plain or backlog), stopping before a backlog match of a watch, channel and listing
// the statement already holds.
func chunkLen(cs []notify.Claim) int {
	backlog := cs[0].Backlog
	var held map[[3]string]bool
	if backlog {
		held = make(map[[3]string]bool, min(len(cs), claimChunk))
	}
	for i, c := range cs {
		if i == claimChunk || c.Backlog != backlog {
			return i
		}
		if backlog {
			k := [3]string{c.Watch, c.Channel, c.Event.ListingKey}
			if held[k] {
				return i
			}
			held[k] = true
		}
	}
	return len(cs)
}

// valuesList is the VALUES list of n rows of 10 parameters.
func valuesList(n int) string {
	return "values " + strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?), ", n-1) + "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
}

// scanMade reads a claim statement's RETURNING rows: key → status and reason.
func scanMade(rows *sql.Rows, err error) (map[string][2]string, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	made := map[string][2]string{}
	for rows.Next() {
		var key, status, reason string
		if err := rows.Scan(&key, &status, &reason); err != nil {
			return nil, err
		}
		made[key] = [2]string{status, reason}
	}
	return made, rows.Err()
}

// Pick implements notify.ClaimStore: every claim of channel still sending whose retry time (if
// any) has come, grouped, with the send keys of new groups fixed in the same transaction.
func (s *Store) Pick(ctx context.Context, ch *notify.Channel, now time.Time, limit int) ([]notify.Group, error) {
	channel := ch.Name
	var groups []notify.Group
	err := s.tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, pickSQL, channel, nanos(now), limit)
		if err != nil {
			return err
		}
		var picked []notify.PickRow
		for rows.Next() {
			var r notify.PickRow
			var key, sendKey, payload string
			var claimedAt, closed int64
			if err := rows.Scan(&key, &r.Watch, &r.CrawlID, &payload, &sendKey, &r.Part, &r.Parts, &r.Attempts, &claimedAt, &r.Backlog, &r.Resend, &closed); err != nil {
				rows.Close()
				return err
			}
			var e events.Event
			if err := json.Unmarshal([]byte(payload), &e); err != nil {
				rows.Close()
				return fmt.Errorf("claim %s: stored event: %w", key, err)
			}
			r.Key, r.Event, r.Channel = uuid.MustParse(key), &e, channel
			r.ClaimedAt, r.Closed = fromNanos(claimedAt), fromNanos(closed)
			if sendKey != "" {
				r.SendKey = uuid.MustParse(sendKey)
			}
			picked = append(picked, r)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
		groups = notify.Groups(picked, ch.Split)
		keyed := map[uuid.UUID]bool{} // claims whose group's send key is fixed already
		for _, r := range picked {
			if r.SendKey != uuid.Nil {
				keyed[r.Key] = true
			}
		}
		for _, g := range groups {
			if keyed[g.Claims[0].Key] {
				continue
			}
			if _, err := tx.ExecContext(ctx, sendKeySQL, keysJSON(g), g.Key.String(), g.Part, g.Parts); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, s.failed("pick "+channel, err)
	}
	return groups, nil
}

// Attempt implements notify.ClaimStore (no lease: hold is not needed).
func (s *Store) Attempt(ctx context.Context, g notify.Group, _ time.Duration) error {
	res, err := s.db.ExecContext(ctx, attemptSQL, keysJSON(g), nanos(s.now()))
	if err != nil {
		return s.failed("attempt", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notify.ErrLost
	}
	return nil
}

// Finish implements notify.ClaimStore.
func (s *Store) Finish(ctx context.Context, g notify.Group, o notify.Outcome) error {
	var err error
	if o.Status == notify.StatusRetry {
		_, err = s.db.ExecContext(ctx, retrySQL, keysJSON(g), o.Error, nanos(o.RetryAt), nanos(s.now()))
	} else {
		_, err = s.db.ExecContext(ctx, finishSQL, keysJSON(g), string(o.Status), o.Error, o.Reason, nanos(s.now()))
	}
	if err != nil {
		return s.failed("finish "+string(o.Status), err)
	}
	return nil
}

// List implements notify.ClaimStore.
func (s *Store) List(ctx context.Context, f notify.Filter) ([]notify.Notification, error) {
	if f.Limit <= 0 {
		f.Limit = 1000
	}
	rows, err := s.db.QueryContext(ctx, listSQL, string(f.Status), f.Watch, f.Limit)
	if err != nil {
		return nil, fmt.Errorf("alerts database %s: list: %w", s.path, err)
	}
	defer rows.Close()
	var out []notify.Notification
	for rows.Next() {
		var n notify.Notification
		var key, eventID, payload string
		var claimedAt, sentAt int64
		if err := rows.Scan(&key, &n.Watch, &n.Channel, &eventID, &n.CrawlID, &payload, &n.Status, &n.Reason, &n.Error,
			&n.Attempts, &claimedAt, &sentAt); err != nil {
			return nil, fmt.Errorf("alerts database %s: list: %w", s.path, err)
		}
		var e events.Event
		if err := json.Unmarshal([]byte(payload), &e); err != nil {
			return nil, fmt.Errorf("alerts database %s: claim %s: stored event: %w", s.path, key, err)
		}
		n.Key, n.EventID = uuid.MustParse(key), uuid.MustParse(eventID)
		n.EventType, n.Course, n.PlayDate, n.TeeTime, n.OccurredAt = string(e.EventType), e.CourseName, e.PlayDate, e.TeeTime, e.OccurredAt
		n.CoursePart, n.PriceKRW = e.CoursePart, e.PriceKRW
		if e.Previous != nil {
			n.PreviousPriceKRW = e.Previous.PriceKRW
		}
		n.ClaimedAt = fromNanos(claimedAt)
		if sentAt != 0 {
			t := fromNanos(sentAt)
			n.SentAt = &t
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("alerts database %s: list: %w", s.path, err)
	}
	return out, nil
}

// Fingerprints returns the fingerprint each watch was last evaluated with on source (by watch).
func (s *Store) Fingerprints(ctx context.Context, source string) (map[string]string, error) {
	rows, err := s.db.QueryContext(ctx, "select watch, fingerprint from fingerprints where source = ?1", source)
	if err != nil {
		return nil, s.failed("read fingerprints", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var w, f string
		if err := rows.Scan(&w, &f); err != nil {
			return nil, s.failed("read fingerprints", err)
		}
		out[w] = f
	}
	if err := rows.Err(); err != nil {
		return nil, s.failed("read fingerprints", err)
	}
	return out, nil
}

// Prune implements notify.ClaimStore.
func (s *Store) Prune(ctx context.Context, before time.Time) (int, error) {
	res, err := s.db.ExecContext(ctx, pruneSQL, nanos(before))
	if err != nil {
		return 0, s.failed("prune", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// Resend implements notify.ClaimStore.
func (s *Store) Resend(ctx context.Context, f notify.ResendFilter) (int, error) {
	channels, _ := json.Marshal(f.Channels)
	since := int64(0)
	if !f.Since.IsZero() {
		since = nanos(f.Since)
	}
	res, err := s.db.ExecContext(ctx, resendSQL, string(channels), f.IncludeUnknown, f.Watch, since, nanos(s.now()))
	if err != nil {
		return 0, s.failed("resend", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// Pending implements notify.ClaimStore.
func (s *Store) Pending(ctx context.Context) ([]notify.Claim, error) {
	rows, err := s.db.QueryContext(ctx, pendingSQL)
	if err != nil {
		return nil, s.failed("read pending claims", err)
	}
	defer rows.Close()
	var out []notify.Claim
	for rows.Next() {
		var c notify.Claim
		var key, payload string
		if err := rows.Scan(&key, &c.Watch, &c.Channel, &payload); err != nil {
			return nil, s.failed("read pending claims", err)
		}
		var e events.Event
		if err := json.Unmarshal([]byte(payload), &e); err != nil {
			return nil, fmt.Errorf("alerts database %s: claim %s: stored event: %w", s.path, key, err)
		}
		c.Key, c.Event, c.Pending = uuid.MustParse(key), &e, true
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, s.failed("read pending claims", err)
	}
	return out, nil
}
