-- Dashboard: events per hour and type in [$1, $2), from the booking_events_hourly rollup
-- (migration 004; append-only, so summed here), never from booking_events: a few rows per batch
-- whatever the event count.
select hour, event_type, sum(events)::bigint
from booking_events_hourly
where hour >= $1 and hour < $2
group by hour, event_type
order by hour, event_type
