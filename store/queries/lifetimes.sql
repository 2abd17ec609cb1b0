-- Lifetimes: rows of booking_lifetimes, the served view (the listing_lifetimes projection under
-- the definition's final layer: the definition's rows, see store/projection.go). Every column, by
-- name: store.Lifetime has one field per column (store/lifetimes_fields.go).
-- The play-date bounds are always present (open ends become -infinity/infinity) so the filter
-- reaches the play_date index whatever the plan.
-- Empty source/course/status mean no filter.
select *
from booking_lifetimes
where play_date between coalesce($1::date, '-infinity'::date) and coalesce($2::date, 'infinity'::date)
  and ($3::text = '' or source = $3)
  and ($4::text = '' or course_name = $4)
  and ($5::text = '' or status = $5)
order by play_date, tee_time, listing_key
