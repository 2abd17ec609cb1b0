package store

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"time"
)

//go:embed queries/export.sql
var exportSQL string

// ExportFilter selects the events Export writes. Nil bounds and an empty Source mean no filter.
type ExportFilter struct {
	Since  *time.Time // occurred_at >= Since
	Until  *time.Time // occurred_at < Until
	Source string
}

// Export writes the stored payloads matching f to w as JSON lines ordered by occurred_at then
// event_id, and returns how many it wrote. Payloads come back as PostgreSQL's jsonb rendering of
// the event (same fields and values, key order and spacing normalised), which events.Decode reads.
func (s *Store) Export(ctx context.Context, w io.Writer, f ExportFilter) (int, error) {
	rows, err := s.pool.Query(ctx, exportSQL, f.Since, f.Until, f.Source)
	if err != nil {
		return 0, fmt.Errorf("export events: %w", interpret(err))
	}
	defer rows.Close()
	n := 0
	var line []byte
	for rows.Next() {
		if err := rows.Scan(&line); err != nil {
			return n, fmt.Errorf("export events: scan row %d: %w", n, err)
		}
		line = append(line, '\n')
		if _, err := w.Write(line); err != nil {
			return n, fmt.Errorf("export events: write row %d: %w", n, err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("export events: %w", interpret(err))
	}
	return n, nil
}
