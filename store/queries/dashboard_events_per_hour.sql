-- Dashboard: events per hour and type in [$1, $2), from the booking_events_hourly rollup
-- (migrations 004 and 008; append-only with negative rows for deletes and updates, so summed
-- here; an hour and type whose events are all gone sums to 0 and is left out), never from
-- booking_events: a few rows per batch whatever the event count.
select hour, event_type, sum(events)::bigint
from booking_events_hourly
where hour >= $1 and hour < $2
group by hour, event_type
having sum(events) <> 0
order by hour, event_type
