-- Dashboard: every stored event of one listing, in the view's order (occurred_at, type, id), with
-- its Kafka position (booking_events_listing_idx).
select event_id::text, event_type, occurred_at, price_krw, players, close_reason,
       kafka_topic, kafka_partition, kafka_offset, ingested_at
from booking_events
where listing_key = $1
order by occurred_at, event_type, event_id
