-- Reader.StatusCounts: listings by status.
select status, count(*)::int
from booking_lifetimes
where play_date between coalesce($1::date, '-infinity'::date) and coalesce($2::date, 'infinity'::date)
  and ($3::text = '' or source = $3)
  and ($4::text = '' or course_name = $4)
  and ($5::text = '' or status = $5)
group by status
order by status
