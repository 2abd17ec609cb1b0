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

// projectionTriggers is projection_triggers.sql with :upsert_set, :fold_set and :all_columns filled in from the columns of
// the listing_lifetimes q sees (the table being swapped in): the recompute's upsert
// overwrites every column but the key, and the list is not written by hand.
func projectionTriggers(ctx context.Context, q querier) (string, error) {
	var cols []string
	if err := q.QueryRow(ctx, projectionUpdateColumnsSQL).Scan(&cols); err != nil {
		return "", fmt.Errorf("listing_lifetimes' columns: %w", err)
	}
	if len(cols) == 0 {
		return "", errors.New("listing_lifetimes' columns: no table listing_lifetimes")
	}
	all := append([]string{"listing_key", "play_date"}, cols...)
	return strings.NewReplacer(":upsert_set", upsertSet(cols), ":fold_set", foldSet(cols),
		":all_columns", columnList(all)).Replace(projectionTriggersSQL), nil
}

// foldSet is "(a, b) = (n.a, n.b)" for cols: the fold's UPDATE from its rows n.
func foldSet(cols []string) string {
	from := make([]string, len(cols))
	for i, c := range cols {
		from[i] = "n." + pgx.Identifier{c}.Sanitize()
	}
	return "(" + columnList(cols) + ") = (" + strings.Join(from, ", ") + ")"
}

// columnList is "a, b" for cols, each quoted.
func columnList(cols []string) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = pgx.Identifier{c}.Sanitize()
	}
	return strings.Join(names, ", ")
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
