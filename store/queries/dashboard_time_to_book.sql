-- Dashboard: the distribution of time to book per course (booked listings): count and the 10th,
-- 25th, 50th, 75th and 90th percentiles of the lifetime in seconds, for a box plot.
select course_name, count(*)::int,
       percentile_cont(array[0.1, 0.25, 0.5, 0.75, 0.9]) within group (order by extract(epoch from lifetime))
from booking_lifetimes_fast
where status = 'booked'
group by course_name
order by course_name
