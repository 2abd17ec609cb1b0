-- DeadLetter: record messages that can never become events, one row per Kafka position. A
-- redelivered poison message bumps attempts and keeps the newest error. The rows come sorted by
-- position, one per position, so concurrent batches lock shared positions in the same order.
-- raw_headers: the message's Kafka headers (migration 009).
insert into booking_events_dead (kafka_topic, kafka_partition, kafka_offset, raw_key, raw_value, error, raw_headers)
select * from unnest($1::text[], $2::int[], $3::bigint[], $4::bytea[], $5::bytea[], $6::text[], $7::jsonb[])
on conflict (kafka_topic, kafka_partition, kafka_offset) do update
set attempts       = booking_events_dead.attempts + 1,
    last_failed_at = now(),
    error          = excluded.error,
    raw_headers    = excluded.raw_headers
