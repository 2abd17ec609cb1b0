-- Dashboard: how many days ahead of the play date listings were booked: play_date minus the
-- booking's date in zone $1, capped at $2 days (the last bucket is "$2 or more").
select least(play_date - (closed_at at time zone $1)::date, $2::int) as days, count(*)::int
from booking_lifetimes_fast
where status = 'booked'
group by days
order by days
