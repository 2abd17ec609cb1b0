-- Refresh, part 2: while a rebuild runs, remember the listings for its catch-up.
insert into listing_lifetimes_pending (listing_key)
select unnest($1::text[]) from listing_lifetimes_state where rebuilding
