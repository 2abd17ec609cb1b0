package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// projectionUpdateColumnsSQL lists listing_lifetimes' columns but its key, in table order.
const projectionUpdateColumnsSQL = `select coalesce(array_agg(column_name::text order by ordinal_position), '{}')
	from information_schema.columns
	where table_schema = current_schema() and table_name = 'listing_lifetimes'
	  and column_name not in ('listing_key', 'play_date')`

// projectionTriggers is projection_triggers.sql with its :upsert_set filled in from the columns of
// the listing_lifetimes q sees (the table being swapped in): the upserts of the fold and the
// recompute overwrite every column but the key, and the list is not written by hand.
func projectionTriggers(ctx context.Context, q querier) (string, error) {
	var cols []string
	if err := q.QueryRow(ctx, projectionUpdateColumnsSQL).Scan(&cols); err != nil {
		return "", fmt.Errorf("listing_lifetimes' columns: %w", err)
	}
	if len(cols) == 0 {
		return "", errors.New("listing_lifetimes' columns: no table listing_lifetimes")
	}
	return strings.ReplaceAll(projectionTriggersSQL, ":upsert_set", upsertSet(cols)), nil
}

// upsertSet is "(a, b) = row(excluded.a, excluded.b)" for cols.
func upsertSet(cols []string) string {
	names := make([]string, len(cols))
	excluded := make([]string, len(cols))
	for i, c := range cols {
		names[i] = pgx.Identifier{c}.Sanitize()
		excluded[i] = "excluded." + names[i]
	}
	return "(" + strings.Join(names, ", ") + ") = row(" + strings.Join(excluded, ", ") + ")"
}
