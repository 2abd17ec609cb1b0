-- Dashboard: what the price did before a booking, over booked listings: dropped, unchanged or
-- raised (last price against the price it opened with; unknown when either is missing), how many,
-- how many price changes on average and the median time to book.
select case
         when open_price_krw is null or last_price_krw is null then 'unknown'
         when last_price_krw < open_price_krw then 'dropped'
         when last_price_krw > open_price_krw then 'raised'
         else 'unchanged' end as direction,
       count(*)::int,
       coalesce(avg(change_count), 0)::float8,
       (extract(epoch from percentile_cont(0.5) within group (order by lifetime)))::float8
from booking_lifetimes_fast
where status = 'booked'
group by direction
order by direction
