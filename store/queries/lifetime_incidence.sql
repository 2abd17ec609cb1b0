-- LifetimeSummary: every listing of booking_lifetimes once (its latest lifetime), with what the
-- cumulative incidence of booking groups it by (docs/time-to-book.md): its course, the weekday of
-- its play date (0 = Sunday), its status (booked, expired, or open: censored at its lifetime as of
-- the clock), its lifetime, and its lead from opening to tee time as a bucket (0: < 1 d, 1: 1-7 d,
-- 2: 7-14 d, 3: 14 d or more; a boundary belongs to the longer bucket). One scan of the
-- projection; the estimator runs in Go (store/incidence.go).
select course_name,
       extract(dow from play_date)::int,
       status,
       lifetime,
       case when l.lead < interval '1 day' then 0
            when l.lead < interval '7 days' then 1
            when l.lead < interval '14 days' then 2
            else 3 end,
       reopen_count > 0
from booking_lifetimes,
     lateral (select (play_date + tee_time) at time zone 'Asia/Seoul' - opened_at as lead) l
where play_date between coalesce($1::date, '-infinity'::date) and coalesce($2::date, 'infinity'::date)
  and ($3::text = '' or source = $3)
  and ($4::text = '' or course_name = $4)
