-- booking_events_hourly is an hourly rollup of booking_events for the dashboard's time-bucketed
-- charts: events per UTC hour (Asia/Seoul is UTC+9, so its hours are the same buckets)
-- and event type, with the newest ingested_at. A statement-level trigger with a transition table
-- appends, in the inserting transaction, one row per hour and type of the rows the statement
-- actually inserted (ON CONFLICT DO NOTHING skips duplicates). Rows are only ever appended, never
-- updated: two transactions never wait for each other on this table, so it adds no lock to the
-- consumer's or a dead-letter retry's order (an upsert of shared hour rows deadlocked them).
-- Readers sum by hour: a batch of a crawl adds a row or two, so 1M events are a few thousand rows.
create table booking_events_hourly (
    hour             timestamptz not null,
    event_type       text        not null,
    events           bigint      not null,
    last_ingested_at timestamptz not null
);
create index booking_events_hourly_hour_idx on booking_events_hourly (hour);

create function booking_events_hourly_add() returns trigger language plpgsql as $$
begin
    insert into booking_events_hourly (hour, event_type, events, last_ingested_at)
    select date_trunc('hour', occurred_at, 'UTC'), event_type, count(*), max(ingested_at)
    from inserted
    group by 1, 2;
    return null;
end $$;

create trigger booking_events_hourly_add after insert on booking_events
    referencing new table as inserted
    for each statement execute function booking_events_hourly_add();

insert into booking_events_hourly (hour, event_type, events, last_ingested_at)
select date_trunc('hour', occurred_at, 'UTC'), event_type, count(*), max(ingested_at)
from booking_events
group by 1, 2;
