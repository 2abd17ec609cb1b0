-- Refresh, part 2: their rows again, from all their stored events, by the view's own logic (the
-- key filter reaches booking_events_listing_idx: the view's windows are partitioned by it).
insert into listing_lifetimes
select * from booking_lifetimes_stored where listing_key = any($1::text[])
