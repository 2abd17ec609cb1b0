-- booking_events_hourly (migration 004) follows every write to booking_events, not only INSERTs:
-- the dashboard's "N events stored", "last ingest" and events-per-hour chart are summed from it,
-- and after a psql DELETE, an UPDATE of occurred_at or event_type, a MERGE or a TRUNCATE they
-- said what had been inserted, not what is stored (2 events "stored" with none left).
--
-- It stays append-only, so no two transactions ever wait for each other on a shared hour row
-- (an upsert deadlocked the consumer with a dead-letter retry; see 004):
--   * DELETE appends, per hour and type of the deleted rows, their count negated;
--   * UPDATE appends the net change per hour and type: the old rows negated, the new ones
--     counted with their newest ingested_at (an update that moves nothing nets 0 and still
--     records the ingested_at it wrote);
--   * TRUNCATE empties it, in the truncating transaction.
-- A negative row has no ingested_at of its own (null). Readers sum by hour and type; "last
-- ingest" is the newest ingested_at among the hours and types that still hold events, so once
-- every event is gone there is none.
alter table booking_events_hourly alter column last_ingested_at drop not null;

create function booking_events_hourly_delete() returns trigger language plpgsql as $$
begin
    insert into booking_events_hourly (hour, event_type, events, last_ingested_at)
    select date_trunc('hour', occurred_at, 'UTC'), event_type, -count(*), null
    from deleted
    group by 1, 2;
    return null;
end $$;

create function booking_events_hourly_update() returns trigger language plpgsql as $$
begin
    insert into booking_events_hourly (hour, event_type, events, last_ingested_at)
    select hour, event_type, sum(n), max(last)
    from (select date_trunc('hour', occurred_at, 'UTC') as hour, event_type, -count(*) as n, null::timestamptz as last
          from old_rows group by 1, 2
          union all
          select date_trunc('hour', occurred_at, 'UTC'), event_type, count(*), max(ingested_at)
          from new_rows group by 1, 2) as c
    group by 1, 2;
    return null;
end $$;

create function booking_events_hourly_truncate() returns trigger language plpgsql as $$
begin
    truncate booking_events_hourly;
    return null;
end $$;

create trigger booking_events_hourly_delete after delete on booking_events
    referencing old table as deleted
    for each statement execute function booking_events_hourly_delete();
create trigger booking_events_hourly_update after update on booking_events
    referencing old table as old_rows new table as new_rows
    for each statement execute function booking_events_hourly_update();
create trigger booking_events_hourly_truncate after truncate on booking_events
    for each statement execute function booking_events_hourly_truncate();

-- What the missing triggers let drift is counted again from the events, once. A consumer's insert
-- running beside this waits for the truncate's lock in its own trigger and appends its rows after
-- this commits; its events are not in the count below (not committed when it reads).
truncate booking_events_hourly;
insert into booking_events_hourly (hour, event_type, events, last_ingested_at)
select date_trunc('hour', occurred_at, 'UTC'), event_type, count(*), max(ingested_at)
from booking_events
group by 1, 2;
