package store

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
)

//go:embed queries/projection_verify.sql
var projectionVerifySQL string

// ProjectionDiff is one listing on which the projection (booking_lifetimes) and the definition
// (booking_lifetimes_from_events, "View") disagree.
type ProjectionDiff struct {
	ListingKey string
	PlayDate   string
	View       map[string]any // nil: the view has no such row
	Projection map[string]any // nil: the projection has no such row
	Columns    []string       // the columns that differ (all of them when a side is missing)
}

func (d ProjectionDiff) String() string {
	if d.View == nil {
		return fmt.Sprintf("%s %s: only in the projection", d.PlayDate, d.ListingKey)
	}
	if d.Projection == nil {
		return fmt.Sprintf("%s %s: missing from the projection", d.PlayDate, d.ListingKey)
	}
	s := fmt.Sprintf("%s %s:", d.PlayDate, d.ListingKey)
	for _, c := range d.Columns {
		s += fmt.Sprintf(" %s view=%v projection=%v;", c, d.View[c], d.Projection[c])
	}
	return s
}

// VerifyProjection compares the served booking_lifetimes (the projection) with the definition
// booking_lifetimes_from_events for every listing, in one statement (one snapshot, one clock),
// and returns the listings where they differ.
func (s *Store) VerifyProjection(ctx context.Context) ([]ProjectionDiff, error) {
	rows, err := s.pool.Query(ctx, projectionVerifySQL)
	if err != nil {
		return nil, fmt.Errorf("verify listing_lifetimes: %w", interpret(err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ProjectionDiff, error) {
		var d ProjectionDiff
		var v, p []byte
		if err := row.Scan(&d.ListingKey, &d.PlayDate, &v, &p); err != nil {
			return d, err
		}
		for _, x := range []struct {
			b   []byte
			dst *map[string]any
		}{{v, &d.View}, {p, &d.Projection}} {
			if x.b == nil || string(x.b) == "null" {
				continue
			}
			if err := json.Unmarshal(x.b, x.dst); err != nil {
				return d, err
			}
		}
		for c, vv := range d.View {
			if d.Projection == nil || fmt.Sprint(vv) != fmt.Sprint(d.Projection[c]) {
				d.Columns = append(d.Columns, c)
			}
		}
		for c := range d.Projection {
			if d.View == nil {
				d.Columns = append(d.Columns, c)
			}
		}
		slices.Sort(d.Columns)
		return d, nil
	})
	if err != nil {
		return nil, fmt.Errorf("verify listing_lifetimes: %w", interpret(err))
	}
	return out, nil
}
