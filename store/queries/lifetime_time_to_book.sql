-- LifetimeSummary, part 2: median time from (re)opening to booking, by course and weekday of the
-- play date (0 = Sunday), over booked listings only.
select course_name, extract(dow from play_date)::int as weekday, count(*)::int,
       (extract(epoch from percentile_cont(0.5) within group (order by lifetime)) * 1000000)::bigint
from booking_lifetimes
where status = 'booked'
  and play_date between coalesce($1::date, '-infinity'::date) and coalesce($2::date, 'infinity'::date)
  and ($3::text = '' or source = $3)
  and ($4::text = '' or course_name = $4)
group by course_name, weekday
order by course_name, weekday
