// Package views holds the SQL views over the booking tables. Views are code, not migrations:
// Install re-creates them on every start (after migrations.Apply), so changing a view is editing
// its .sql file. They are the definition, booking_lifetimes_from_events (and its stored layer);
// the served booking_lifetimes is the same final layer over the listing_lifetimes projection and
// is created by the projection's build (store/projection.go), which migrate runs after Install
// and again whenever these files change.
package views

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// BookingLifetimesFromEventsSQL drops and re-creates booking_lifetimes_from_events_stored, the
// event-derived layer of the definition (see the file's comments for its semantics and
// performance).
//
//go:embed booking_lifetimes_from_events.sql
var BookingLifetimesFromEventsSQL string

// lifetimesClockSQL is the clock-dependent final layer of booking_lifetimes, a template (see
// ClockLayer).
//
//go:embed lifetimes_clock.sql
var lifetimesClockSQL string

// ClockLayer is the statement that creates or replaces view: the clock-dependent final layer of
// booking_lifetimes (expiry and lifetime, computed at query time) over stored, a relation with the
// columns of booking_lifetimes_from_events_stored. The view's columns are read from stored's
// catalog when the statement runs (every stored column, in its order, lifetime after
// last_event_at), so a column added to the definition needs no edit of the clock layer. The
// definition (booking_lifetimes_from_events) and the served booking_lifetimes (over the
// projection) are both made by it, so the two cannot drift apart.
func ClockLayer(view, stored string) string {
	return strings.NewReplacer(":view", view, ":stored", stored).Replace(lifetimesClockSQL)
}

// Sources lists every view statement in install order, for Install and for hashing (storetest
// names its template database after their contents).
var Sources = []string{BookingLifetimesFromEventsSQL,
	ClockLayer("booking_lifetimes_from_events", "booking_lifetimes_from_events_stored")}

// Install re-creates every view in one transaction, serialised by an advisory lock taken inside
// it, so concurrent starts of the consumer neither fail nor expose a missing view.
func Install(ctx context.Context, conn *pgx.Conn) error {
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		for _, sql := range Sources {
			if _, err := tx.Exec(ctx, sql); err != nil {
				return fmt.Errorf("install views: %w", err)
			}
		}
		return nil
	})
}
