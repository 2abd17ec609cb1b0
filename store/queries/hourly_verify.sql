-- Verify: every hour and event type where the booking_events_hourly rollup (summed) and a count
-- of booking_events disagree. One statement, so one snapshot: a write commits its events and its
-- rollup rows together. Reads every event, like the projection's verify.
select coalesce(r.hour, e.hour), coalesce(r.event_type, e.event_type), coalesce(r.events, 0), coalesce(e.events, 0)
from (select hour, event_type, sum(events)::bigint as events
      from booking_events_hourly group by 1, 2 having sum(events) <> 0) as r
full join (select date_trunc('hour', occurred_at, 'UTC') as hour, event_type, count(*) as events
           from booking_events group by 1, 2) as e
  on e.hour = r.hour and e.event_type = r.event_type
where r.events is distinct from e.events
order by 1, 2
