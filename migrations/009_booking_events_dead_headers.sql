-- booking_events_dead.raw_headers keeps a dead letter's Kafka headers as received (the CloudEvents
-- ce_ headers among them), so that `booking-consumer dead show` prints them and `dead retry`
-- checks them again: a message can be dead-lettered for its headers alone. A JSON array of
-- {"key": ..., "value": ...} in order; a key or value that jsonb cannot hold as text (invalid UTF-8
-- or a NUL byte) is key_base64 / value_base64 instead. Null: dead-lettered before this migration,
-- headers not kept (an empty array means the message had none).
alter table booking_events_dead add column raw_headers jsonb;
