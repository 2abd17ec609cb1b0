-- Swap, part 2, after booking_lifetimes was re-pointed at the new table (create or replace view,
-- views/lifetimes_clock.sql): the alias booking_lifetimes_fast (the served view's name before
-- the projection served booking_lifetimes, kept for one release), the old table dropped (RESTRICT: an object a user built on
-- listing_lifetimes itself makes the rebuild fail with PostgreSQL's list of dependents, nothing is
-- dropped silently), the constraint and indexes renamed to their final names, and
-- booking_lifetimes_stored, the definition's stored layer under its name of that release, dropped.
create or replace view booking_lifetimes_fast as select * from booking_lifetimes;
drop table if exists listing_lifetimes_old;
alter table listing_lifetimes rename constraint listing_lifetimes_next_pkey to listing_lifetimes_pkey;
alter index listing_lifetimes_next_play_date_idx rename to listing_lifetimes_play_date_idx;
alter index listing_lifetimes_next_course_idx rename to listing_lifetimes_course_idx;
alter index listing_lifetimes_next_source_idx rename to listing_lifetimes_source_idx;
drop view if exists booking_lifetimes_stored;
