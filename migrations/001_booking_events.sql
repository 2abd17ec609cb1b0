-- booking_events holds every distinct booking event exactly once (event_id is its identity; a
-- redelivery or a replay hits ON CONFLICT (event_id) DO NOTHING). The typed columns serve the
-- booking_lifetimes view; payload keeps the event as received for export and replay.
--
-- Indexes are deliberately few: each one costs ingest throughput (a jsonb row with three indexes
-- COPYs at ~20k rows/s here, a slimmer one at 70-95k rows/s).
--   primary key (event_id)                        dedupe, ExistingIDs
--   (play_date, listing_key, occurred_at)         booking_lifetimes filtered by a play-date window
--   (listing_key, occurred_at)                    booking_lifetimes for one listing
create table booking_events (
    event_id        uuid        primary key,
    event_type      text        not null
        check (event_type in ('listing_opened', 'listing_changed', 'listing_closed')),
    source          text        not null,
    listing_key     text        collate "C" not null, -- bytewise: cheap sorts for the view
    course_name     text        not null,
    course_part     text        not null default '',
    play_date       date        not null,
    tee_time        time        not null,
    price_krw       bigint      check (price_krw >= 0),
    players         int         check (players between 0 and 100),
    close_reason    text        check (close_reason in ('booked', 'expired')),
    occurred_at     timestamptz not null,
    crawl_id        text        not null,
    payload         jsonb       not null,
    kafka_topic     text,
    kafka_partition int,
    kafka_offset    bigint,
    ingested_at     timestamptz not null default now(),
    constraint booking_events_close_reason_only_on_close
        check ((event_type = 'listing_closed') = (close_reason is not null))
);

create index booking_events_play_date_idx on booking_events (play_date, listing_key, occurred_at);
create index booking_events_listing_idx on booking_events (listing_key, occurred_at);
