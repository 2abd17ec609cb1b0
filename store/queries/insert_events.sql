-- InsertEvents: one set-based insert of a batch of events, arrays as parameters (13 of them
-- whatever the batch size, far from the 65,535 bind-parameter limit). A known event_id is skipped;
-- the listing key of every new event comes back (their count is the number of new events, and
-- their listings are what the listing_lifetimes projection refreshes).
insert into booking_events (
    event_id, event_type, source, listing_key, course_name, course_part, play_date, tee_time,
    price_krw, players, close_reason, occurred_at, crawl_id, payload,
    kafka_topic, kafka_partition, kafka_offset)
select
    u.event_id, u.event_type, u.source, u.listing_key, u.course_name, u.course_part,
    u.play_date::date, u.tee_time::time, u.price_krw, u.players, u.close_reason, u.occurred_at,
    u.crawl_id, u.payload::jsonb, u.kafka_topic, u.kafka_partition, u.kafka_offset
from unnest(
    $1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
    $8::text[], $9::bigint[], $10::int[], $11::text[], $12::timestamptz[], $13::text[],
    $14::text[], $15::text[], $16::int[], $17::bigint[]
) as u(event_id, event_type, source, listing_key, course_name, course_part, play_date, tee_time,
       price_krw, players, close_reason, occurred_at, crawl_id, payload,
       kafka_topic, kafka_partition, kafka_offset)
on conflict (event_id) do nothing
returning listing_key
