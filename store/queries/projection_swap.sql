-- Swap listing_lifetimes_next in as listing_lifetimes (inside the rebuild's final transaction,
-- after the catch-up), then rename its constraint and indexes to their final names.
drop view if exists booking_lifetimes_fast;
drop table if exists listing_lifetimes;
alter table listing_lifetimes_next rename to listing_lifetimes;
alter table listing_lifetimes rename constraint listing_lifetimes_next_pkey to listing_lifetimes_pkey;
alter index listing_lifetimes_next_play_date_idx rename to listing_lifetimes_play_date_idx;
alter index listing_lifetimes_next_course_idx rename to listing_lifetimes_course_idx;
alter index listing_lifetimes_next_source_idx rename to listing_lifetimes_source_idx;
alter index listing_lifetimes_next_status_idx rename to listing_lifetimes_status_idx;
