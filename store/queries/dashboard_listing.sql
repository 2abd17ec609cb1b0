-- Dashboard: the booking_lifetimes row of one listing (the projection, by its key index).
select listing_key, source, course_name, course_part, play_date::text, to_char(tee_time, 'HH24:MI'),
       status, opened_at, closed_at, last_event_type, last_event_at,
       (extract(epoch from lifetime) * 1000000)::bigint as lifetime_us,
       open_price_krw, last_price_krw, change_count, reopen_count
from booking_lifetimes
where listing_key = $1
order by play_date
