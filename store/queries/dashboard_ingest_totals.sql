-- Dashboard: stored events and the last ingest time, from the hourly rollup (a few thousand rows
-- at 1M events).
select coalesce(sum(events), 0)::bigint, max(last_ingested_at)
from booking_events_hourly
