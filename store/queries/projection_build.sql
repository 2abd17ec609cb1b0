-- Build listing_lifetimes_next from every stored event (one snapshot), with the projection's
-- indexes. Its columns are booking_lifetimes_from_events_stored's, in order, so refreshes can insert select *.
-- Fillfactor 50 leaves room on each page for a second version of every row on it: a crawl's batch
-- refreshes listings that were first seen together, so one statement updates every row of a page,
-- and each update stays on its page without touching the indexes (HOT) only while the page has room
-- (at fillfactor 70, 13% of the crawl benchmark's updates moved rows and wrote all five indexes).
-- Indexes: the key (one listing), the play-date window, course and source; none on a column the
-- fold changes (status, times, prices, counts), so every refresh can be HOT. status has none on
-- purpose: booking_lifetimes' status is computed by the clock layer (open turns expired), so no
-- filter on it can use an index on the stored one (EXPLAIN: a Filter on the CASE, even with
-- enable_seqscan off).
drop table if exists listing_lifetimes_next;
create table listing_lifetimes_next with (fillfactor = 50) as
    select * from booking_lifetimes_from_events_stored order by play_date, listing_key;
alter table listing_lifetimes_next
    add constraint listing_lifetimes_next_pkey primary key (listing_key, play_date);
create index listing_lifetimes_next_play_date_idx on listing_lifetimes_next (play_date);
create index listing_lifetimes_next_course_idx on listing_lifetimes_next (course_name, play_date);
create index listing_lifetimes_next_source_idx on listing_lifetimes_next (source, play_date);
