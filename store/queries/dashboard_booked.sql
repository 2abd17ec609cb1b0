-- Dashboard overview: every booked listing's few columns in ONE scan of the projection; the
-- overview aggregates them in Go (medians by course and weekday, percentiles per course, lead
-- time, price direction) instead of scanning booked listings once per chart. Booked is a final
-- status: these rows read the same in booking_lifetimes.
-- lead_days: play date minus the booking's date in zone $1.
select course_name, extract(dow from play_date)::int, extract(epoch from lifetime)::float8,
       play_date - (closed_at at time zone $1)::date,
       case
         when open_price_krw is null or last_price_krw is null then 'unknown'
         when last_price_krw < open_price_krw then 'dropped'
         when last_price_krw > open_price_krw then 'raised'
         else 'unchanged' end,
       change_count
from booking_lifetimes
where status = 'booked'
