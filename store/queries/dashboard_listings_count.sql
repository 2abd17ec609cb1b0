-- Dashboard: how many rows the Listings filters select (lifetimes.sql's filters), for paging.
-- Without a status filter no row's status is computed, so this is an index-only count.
select count(*)::int
from booking_lifetimes
where play_date between coalesce($1::date, '-infinity'::date) and coalesce($2::date, 'infinity'::date)
  and ($3::text = '' or source = $3)
  and ($4::text = '' or course_name = $4)
  and ($5::text = '' or status = $5)
