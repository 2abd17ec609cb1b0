-- booking_events_dead keeps the Kafka messages that can never become a booking event (malformed
-- JSON, contract violations, rows PostgreSQL rejects), byte for byte, with the reason. One row per
-- Kafka position: a redelivered poison message bumps attempts instead of adding a row.
create table booking_events_dead (
    id              bigserial   primary key,
    kafka_topic     text        not null,
    kafka_partition int         not null,
    kafka_offset    bigint      not null,
    raw_key         bytea,
    raw_value       bytea,
    error           text        not null,
    first_failed_at timestamptz not null default now(),
    last_failed_at  timestamptz not null default now(),
    attempts        int         not null default 1,
    unique (kafka_topic, kafka_partition, kafka_offset)
);
