package storetest

import (
	"fmt"
	"strings"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/store"
)

// Columns are the booking_events columns an event fills, in the order of Row's values: what the
// benchmarks COPY when they measure the raw ceiling store.Ingest is compared with. They come
// from store's one definition of the row (store.EventColumns).
var Columns = store.EventColumns()

// NaiveInsertSQL stores one event (Row's values), skipping a known event_id: what the benchmarks'
// naive consumer runs per message, in autocommit.
var NaiveInsertSQL = naiveInsertSQL()

func naiveInsertSQL() string {
	ph := make([]string, len(Columns))
	for i := range ph {
		ph[i] = fmt.Sprintf("$%d", i+1)
	}
	return "insert into booking_events (" + strings.Join(Columns, ", ") + ") values (" +
		strings.Join(ph, ", ") + ") on conflict (event_id) do nothing"
}

// Row renders e, delivered at topic/partition/offset as value, as the values of Columns. e must be
// valid (events.Decode's output): its dates are not checked again.
func Row(e events.Event, topic string, partition int, offset int64, value []byte) []any {
	return store.CopyRow(e, topic, partition, offset, value)
}
