-- Dashboard: events per hour and type in [$1, $2), from the booking_events_hourly rollup
-- (migration 004), never from booking_events: a few hundred rows whatever the event count.
select hour, event_type, events
from booking_events_hourly
where hour >= $1 and hour < $2
order by hour, event_type
