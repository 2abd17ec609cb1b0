-- RetryDead, step 2: store one re-validated dead letter as an event, at the Kafka position it was
-- dead-lettered from. Idempotent like the consumer's insert: a known event_id is skipped, so
-- RowsAffected says whether it was new.
insert into booking_events (
    event_id, event_type, source, listing_key, course_name, course_part, play_date, tee_time,
    price_krw, players, close_reason, occurred_at, crawl_id, payload,
    kafka_topic, kafka_partition, kafka_offset)
values ($1::uuid, $2, $3, $4, $5, $6, $7::date, $8::time, $9, $10, $11, $12, $13, $14::jsonb, $15, $16, $17)
on conflict (event_id) do nothing
