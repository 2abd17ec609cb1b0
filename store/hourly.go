package store

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

//go:embed queries/hourly_verify.sql
var hourlyVerifySQL string

// HourlyDiff is one hour and event type on which the dashboard's rollup (booking_events_hourly,
// summed) and booking_events disagree.
type HourlyDiff struct {
	Hour      time.Time
	EventType string
	Rollup    int64 // what the dashboard counts
	Stored    int64 // what booking_events holds
}

func (d HourlyDiff) String() string {
	return fmt.Sprintf("%s %s: booking_events_hourly counts %d, booking_events holds %d",
		d.Hour.UTC().Format("2006-01-02 15:04Z"), d.EventType, d.Rollup, d.Stored)
}

// VerifyHourly compares the hourly rollup the dashboard's totals and chart are summed from with a
// count of booking_events per hour and type, in one statement (one snapshot), and returns where
// they differ. It reads every event.
func (s *Store) VerifyHourly(ctx context.Context) ([]HourlyDiff, error) {
	rows, err := s.pool.Query(ctx, hourlyVerifySQL)
	if err != nil {
		return nil, fmt.Errorf("verify booking_events_hourly: %w", interpret(err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (HourlyDiff, error) {
		var d HourlyDiff
		err := row.Scan(&d.Hour, &d.EventType, &d.Rollup, &d.Stored)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("verify booking_events_hourly: %w", interpret(err))
	}
	return out, nil
}
