-- Build listing_lifetimes_next from every stored event (one snapshot), with the projection's
-- indexes. Its columns are booking_lifetimes_from_events_stored's, in order, so refreshes can insert select *.
-- Fillfactor 70 leaves room on each page for in-place (HOT) updates by the refresh. A crawl's batch
-- refreshes listings first seen together, so one statement updates every row of a page, and at 70 a
-- page has room for a second version of about half its rows: 13% of the updates of a psql load in
-- the crawl benchmark's shape were not HOT (each wrote the four indexes). Fillfactor 50 made all of
-- them HOT, but gives whole-table reads (lifetimes --summary, the dashboard) 1.4x the pages, and
-- --summary is at its 200 ms target; the ingest gain was within the benchmark's noise.
-- Indexes: the key (one listing), the play-date window, course and source; none on a column the
-- fold changes (status, times, prices, counts), so a refresh that finds room is HOT. status has
-- none on purpose: booking_lifetimes' status is computed by the clock layer (open turns expired),
-- so no filter on it can use an index on the stored one (EXPLAIN: a Filter on the CASE, even with
-- enable_seqscan off), and it made every close and reopen write all five indexes.
drop table if exists listing_lifetimes_next;
create table listing_lifetimes_next with (fillfactor = 70) as
    select * from booking_lifetimes_from_events_stored order by play_date, listing_key;
alter table listing_lifetimes_next
    add constraint listing_lifetimes_next_pkey primary key (listing_key, play_date);
create index listing_lifetimes_next_play_date_idx on listing_lifetimes_next (play_date);
create index listing_lifetimes_next_course_idx on listing_lifetimes_next (course_name, play_date);
create index listing_lifetimes_next_source_idx on listing_lifetimes_next (source, play_date);
