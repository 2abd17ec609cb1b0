package store

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// WriteBatchPaths are the whole-batch writes Ingest can use, by name, for BenchmarkIngest's side
// by side comparison: copy (the binary COPY into the staging table, Ingest's), unnest-binary (the
// unnest with hand-encoded arrays), unnest-pgx (the unnest with pgx's array encoding, as before).
var WriteBatchPaths = []string{"copy", "unnest-binary", "unnest-pgx"}

// UseWriteBatch makes Ingest write whole batches the named way until the returned undo is called.
// Not safe while another Ingest runs.
func UseWriteBatch(name string) (undo func()) {
	was := writeBatch
	writeBatch = map[string]func(context.Context, pgx.Tx, eventRows) (int, error){
		"copy": copyEvents, "unnest-binary": insertEventsBinary, "unnest-pgx": insertEvents,
	}[name]
	return func() { writeBatch = was }
}
