-- Rebuild catch-up: the rows of the listings $1 in listing_lifetimes_next, from all their stored
-- events (run after deleting them there; only the rebuild writes that table).
insert into listing_lifetimes_next
select * from booking_lifetimes_from_events_stored where listing_key = any($1::text[])
