// Package views holds the SQL views over the booking tables. Views are code, not migrations:
// Install re-creates them on every start (after migrations.Apply), so changing a view is editing
// its .sql file. The listing_lifetimes projection of booking_lifetimes (store/projection.go) is
// rebuilt by migrate whenever these files change.
package views

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// BookingLifetimesSQL drops and re-creates the booking_lifetimes view (see the file's comments
// for its semantics and performance).
//
//go:embed booking_lifetimes.sql
var BookingLifetimesSQL string

// lifetimesClockSQL is the clock-dependent final layer of booking_lifetimes, a template (see
// ClockLayer).
//
//go:embed lifetimes_clock.sql
var lifetimesClockSQL string

// ClockLayer is the CREATE VIEW of view: the clock-dependent final layer of booking_lifetimes
// (expiry and lifetime, computed at query time) over stored, a relation with the columns of
// booking_lifetimes_stored. The view and the projection's booking_lifetimes_fast are both made
// by it, so the two cannot drift apart.
func ClockLayer(view, stored string) string {
	return strings.NewReplacer(":view", view, ":stored", stored).Replace(lifetimesClockSQL)
}

// Sources lists every view statement in install order, for Install and for hashing (storetest
// names its template database after their contents).
var Sources = []string{BookingLifetimesSQL, ClockLayer("booking_lifetimes", "booking_lifetimes_stored")}

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
