-- booking_events_hourly is an hourly rollup of booking_events for the dashboard's time-bucketed
-- charts (issue 14): events per UTC hour (Asia/Seoul is UTC+9, so its hours are the same buckets)
-- and event type, with the newest ingested_at of the hour's rows. A statement-level trigger with a
-- transition table keeps it in the inserting transaction: only rows actually inserted (ON CONFLICT
-- DO NOTHING skips duplicates) are counted, once per statement, and the upsert visits the hours in
-- order so concurrent batches wait for each other instead of deadlocking. At 1M events the
-- dashboard reads a few hundred rows here instead of scanning the events.
create table booking_events_hourly (
    hour             timestamptz not null,
    event_type       text        not null,
    events           bigint      not null,
    last_ingested_at timestamptz not null,
    primary key (hour, event_type)
);

create function booking_events_hourly_add() returns trigger language plpgsql as $$
begin
    insert into booking_events_hourly as h (hour, event_type, events, last_ingested_at)
    select date_trunc('hour', occurred_at, 'UTC'), event_type, count(*), max(ingested_at)
    from inserted
    group by 1, 2
    order by 1, 2
    on conflict (hour, event_type) do update
        set events = h.events + excluded.events,
            last_ingested_at = greatest(h.last_ingested_at, excluded.last_ingested_at);
    return null;
end $$;

create trigger booking_events_hourly_add after insert on booking_events
    referencing new table as inserted
    for each statement execute function booking_events_hourly_add();

insert into booking_events_hourly (hour, event_type, events, last_ingested_at)
select date_trunc('hour', occurred_at, 'UTC'), event_type, count(*), max(ingested_at)
from booking_events
group by 1, 2;
