package store

import (
	"bufio"
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/golfcrawler/golf-crawler/internal/atomicfile"
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

// ExportFile writes what Export writes to the file at path, atomically: into a temporary file of
// its own in the same directory (os.CreateTemp, so concurrent exports never share one), flushed
// and fsynced, then renamed over path, and the directory fsynced. Readers see the old file or the
// whole new one; of two concurrent exports to one path, the file is whichever renamed last, never
// a mix. On any error the temporary file is removed and path is untouched.
func (s *Store) ExportFile(ctx context.Context, path string, f ExportFilter) (int, error) {
	n := 0
	err := writeFileAtomic(path, func(w io.Writer) error {
		var err error
		n, err = s.Export(ctx, w, f)
		return err
	})
	return n, err
}

// writeFileAtomic writes path through write as described on ExportFile. The file is created 0644.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	err := atomicfile.Write(path, 0o644, func(f *os.File) error {
		w := bufio.NewWriterSize(f, 256<<10)
		if err := write(w); err != nil {
			return err
		}
		return w.Flush()
	})
	if err != nil {
		return fmt.Errorf("export to %s: %w", path, err)
	}
	return nil
}
