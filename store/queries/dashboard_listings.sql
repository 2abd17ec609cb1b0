-- Dashboard: one page of the Listings table: the filters of lifetimes.sql, an ORDER BY chosen from
-- a fixed list in store/dashboard.go (the placeholder below is replaced by one of those constants,
-- never by request text), then LIMIT $6 OFFSET $7. Every column, read by name into store.Lifetime.
-- The ORDER BY names are qualified (l.): they are the relation's columns.
select l.*
from booking_lifetimes l
where play_date between coalesce($1::date, '-infinity'::date) and coalesce($2::date, 'infinity'::date)
  and ($3::text = '' or source = $3)
  and ($4::text = '' or course_name = $4)
  and ($5::text = '' or status = $5)
order by /*ORDER*/ l.play_date, l.tee_time, l.listing_key
limit $6 offset $7
