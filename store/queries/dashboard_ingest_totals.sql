-- Dashboard: stored events and the last ingest time, from the hourly rollup.
select coalesce(sum(events), 0)::bigint, max(last_ingested_at)
from booking_events_hourly
