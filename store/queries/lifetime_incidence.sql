-- LifetimeSummary: every listing of booking_lifetimes once (its latest lifetime), with what the
-- cumulative incidence of booking groups it by (docs/time-to-book.md): its course, its lifetime,
-- and one integer packing the rest (fewer columns to send and scan for 100k rows):
--   ((weekday of the play date, 0 = Sunday) * 4 + lead bucket) * 6 + outcome * 2 + reopened
-- with the lead from opening to tee time as a bucket (0: < 1 d, 1: 1-7 d, 2: 7-14 d, 3: 14 d or
-- more; a boundary belongs to the longer bucket), the outcome 0 open (censored at its lifetime as
-- of the clock), 1 booked, 2 expired, and reopened 1 if it opened again after a close. One scan
-- of the projection; the estimator runs in Go (store/incidence.go). The tee time is an instant
-- at the fixed offset +09:00, Asia/Seoul's since 1988 (views/lifetimes_clock.sql relies on it
-- too): a zone name would cost a time-zone database conversion per row.
select course_name,
       lifetime,
       ((extract(dow from play_date)::int * 4
         + case when l.lead < interval '1 day' then 0
                when l.lead < interval '7 days' then 1
                when l.lead < interval '14 days' then 2
                else 3 end) * 6
        + case status when 'booked' then 1 when 'expired' then 2 else 0 end * 2
        + (reopen_count > 0)::int)::int
from booking_lifetimes,
     lateral (select (play_date + tee_time) at time zone interval '09:00' - opened_at as lead) l
where play_date between coalesce($1::date, '-infinity'::date) and coalesce($2::date, 'infinity'::date)
  and ($3::text = '' or source = $3)
  and ($4::text = '' or course_name = $4)
