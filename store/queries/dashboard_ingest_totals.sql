-- Dashboard: stored events and the last ingest time, from the hourly rollup (a few thousand rows
-- at 1M events). The rollup follows every write (migrations 004 and 008: a DELETE or an UPDATE
-- appends negative counts, TRUNCATE empties it), so the sum is what is stored; the last ingest is
-- the newest among the hours and types that still hold events.
select coalesce(sum(n), 0)::bigint, max(last) filter (where n > 0)
from (select sum(events) as n, max(last_ingested_at) as last
      from booking_events_hourly
      group by hour, event_type) as g
