-- LifetimeSummary: the listings of booking_lifetimes (each once, by its latest lifetime) counted
-- by what the cumulative incidence of booking needs (docs/time-to-book.md): their course, their
-- lifetime, and one integer packing the rest of the group and the outcome:
--   ((weekday of the play date, 0 = Sunday) * 4 + lead bucket) * 6 + outcome * 2 + reopened
-- with the lead from opening to tee time as a bucket (0: < 1 d, 1: 1-7 d, 2: 7-14 d, 3: 14 d or
-- more; a boundary belongs to the longer bucket), the outcome 0 open (censored at its lifetime as
-- of the clock), 1 booked, 2 expired, and reopened 1 if it opened again after a close.
--
-- One scan, one row per distinct (course, lifetime, packed) with its count: listings sharing a
-- lifetime are ties for the estimator anyway, so nothing is lost, and Go receives far fewer rows
-- than listings (25,700 for the benchmark's 100,000); it rolls them up into the groups (overall,
-- course, course x weekday, lead) and runs the estimator (store/incidence.go). The lifetime is
-- exact (an interval, to the microsecond), never bucketed. Grouping sets per group would send
-- more: each set repeats every distinct lifetime (100,804 rows for the same benchmark).
--
-- Cheap per row: the inner select computes the lead once (offset 0 keeps it from being inlined
-- into each branch of the case) and the weekday by integer arithmetic on the date (2000-01-02
-- was a Sunday; the double modulo keeps it in 0..6 before it), not extract(dow), which computes a
-- numeric. The bucket tests the longest lead first, the common case. The tee time is an instant
-- at the fixed offset +09:00, Asia/Seoul's since 1988 (views/lifetimes_clock.sql relies on it
-- too): a zone name would cost a time-zone database conversion per row.
select course_name,
       lifetime,
       ((weekday * 4
         + case when lead >= interval '14 days' then 3
                when lead >= interval '7 days' then 2
                when lead >= interval '1 day' then 1
                else 0 end) * 6
        + case status when 'booked' then 1 when 'expired' then 2 else 0 end * 2
        + (reopen_count > 0)::int)::int,
       count(*)::int
from (select course_name, lifetime, status, reopen_count,
             ((play_date - date '2000-01-02') % 7 + 7) % 7 as weekday,
             (play_date + tee_time) at time zone interval '09:00' - opened_at as lead
      from booking_lifetimes
      where play_date between coalesce($1::date, '-infinity'::date) and coalesce($2::date, 'infinity'::date)
        and ($3::text = '' or source = $3)
        and ($4::text = '' or course_name = $4)
      offset 0) l
group by 1, 2, 3
