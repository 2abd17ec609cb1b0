package storetest

import (
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/golfcrawler/golf-crawler/events"
)

// Columns are the booking_events columns an event fills, in the order of Row's values: what the
// benchmarks COPY when they measure the raw ceiling store.Ingest is compared with.
var Columns = []string{"event_id", "event_type", "source", "listing_key", "course_name", "course_part",
	"play_date", "tee_time", "price_krw", "players", "close_reason", "occurred_at", "crawl_id", "payload",
	"kafka_topic", "kafka_partition", "kafka_offset"}

// NaiveInsertSQL stores one event (Row's values), skipping a known event_id: what the benchmarks'
// naive consumer runs per message, in autocommit.
const NaiveInsertSQL = `insert into booking_events (event_id, event_type, source, listing_key, course_name,
	course_part, play_date, tee_time, price_krw, players, close_reason, occurred_at, crawl_id, payload,
	kafka_topic, kafka_partition, kafka_offset)
	values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
	on conflict (event_id) do nothing`

// Row renders e, delivered at topic/partition/offset as value, as the values of Columns. e must be
// valid (events.Decode's output): its dates are not checked again.
func Row(e events.Event, topic string, partition int, offset int64, value []byte) []any {
	date, _ := time.Parse(events.DateLayout, e.PlayDate)
	tee, _ := time.Parse(events.TimeLayout, e.TeeTime)
	var players *int32
	if e.Players != nil {
		p := int32(*e.Players)
		players = &p
	}
	var reason *string
	if e.CloseReason != "" {
		r := string(e.CloseReason)
		reason = &r
	}
	return []any{e.EventID, string(e.EventType), e.Source, e.ListingKey, e.CourseName, e.CoursePart,
		date, pgtype.Time{Microseconds: int64(tee.Hour()*3600+tee.Minute()*60) * 1e6, Valid: true},
		e.PriceKRW, players, reason, e.OccurredAt, e.CrawlID, string(value),
		topic, int32(partition), offset}
}
