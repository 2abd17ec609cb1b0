-- Build listing_lifetimes_next from every stored event (one snapshot), with the projection's
-- indexes. Its columns are booking_lifetimes_from_events_stored's, in order, so refreshes can insert select *.
-- Fillfactor 70 leaves room on each page for in-place (HOT) updates by the refresh.
-- Indexes: the key (one listing), the play-date window, course, source, and stored status (booked
-- is final; open and expired also depend on the clock, see booking_lifetimes).
drop table if exists listing_lifetimes_next;
create table listing_lifetimes_next with (fillfactor = 70) as
    select * from booking_lifetimes_from_events_stored order by play_date, listing_key;
alter table listing_lifetimes_next
    add constraint listing_lifetimes_next_pkey primary key (listing_key, play_date);
create index listing_lifetimes_next_play_date_idx on listing_lifetimes_next (play_date);
create index listing_lifetimes_next_course_idx on listing_lifetimes_next (course_name, play_date);
create index listing_lifetimes_next_source_idx on listing_lifetimes_next (source, play_date);
create index listing_lifetimes_next_status_idx on listing_lifetimes_next (status, play_date);
