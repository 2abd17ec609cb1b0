-- Dashboard: the booking_lifetimes row of one listing (the projection, by its key index): every
-- column, read by name into store.Lifetime.
select *
from booking_lifetimes
where listing_key = $1
order by play_date
