-- Dashboard: one page of the Listings table: the filters of lifetimes.sql, an ORDER BY chosen from
-- a fixed list in store/dashboard.go (the placeholder below is replaced by one of those constants,
-- never by request text), then LIMIT $6 OFFSET $7. The ORDER BY names are qualified (l.) so that
-- they mean the relation's columns, not the output columns of the same name (play_date is text here).
select listing_key, source, course_name, course_part, play_date::text, to_char(tee_time, 'HH24:MI'),
       status, opened_at, closed_at, last_event_type, last_event_at,
       (extract(epoch from lifetime) * 1000000)::bigint as lifetime_us,
       open_price_krw, last_price_krw, change_count, reopen_count
from booking_lifetimes l
where play_date between coalesce($1::date, '-infinity'::date) and coalesce($2::date, 'infinity'::date)
  and ($3::text = '' or source = $3)
  and ($4::text = '' or course_name = $4)
  and ($5::text = '' or status = $5)
order by /*ORDER*/ l.play_date, l.tee_time, l.listing_key
limit $6 offset $7
