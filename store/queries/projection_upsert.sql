-- Refresh (Ingest, in its transaction, under the listings' locks): the rows of the listings $1
-- again, from all their stored events, by the view's own logic (the key filter reaches
-- booking_events_listing_idx: the view's windows are partitioned by listing_key). An upsert rather
-- than delete + insert: when no indexed column changes (a price change, most events) PostgreSQL
-- updates the row in place without touching the indexes (HOT; the table has fillfactor 70), 3x
-- cheaper. Rows never need deleting: a listing's events are never removed.
--
-- A template: the rebuild fills in the table's own columns (all but the key) from the catalog
-- and stores the statement in listing_lifetimes_state.refresh_sql, in the transaction that swaps
-- the table in, so the statement always names exactly the columns the view has.
insert into listing_lifetimes
select * from booking_lifetimes_from_events_stored where listing_key = any($1::text[])
on conflict (listing_key, play_date) do update set (%s) = row(%s)
