-- The projection's trigger functions (the triggers are migration 007's), installed by the
-- rebuild's swap in the transaction that puts the table they write in place. Each runs once per
-- statement on booking_events, with the statement's rows as transition tables, takes the
-- listings' locks (listing_lifetimes_lock, migration 007) in a statement of its own and then
-- refreshes their rows: every statement after the lock sees what a concurrent writer of the same
-- listings committed.
--
-- listing_lifetimes_recompute(keys): the rows of the listings keys again, from all their stored
-- events, by the definition's own logic (the key filter reaches booking_events_listing_idx: the
-- view's windows are partitioned by listing_key), upserted: when no indexed column changes (a
-- price change, most events) PostgreSQL updates the row in place without touching the indexes
-- (HOT; the table has fillfactor 70). Rows of listings left without events are deleted.
create or replace function listing_lifetimes_recompute(keys text[]) returns void
language plpgsql as $fn$
begin
    insert into listing_lifetimes
    select * from booking_lifetimes_from_events_stored where listing_key = any(keys)
    on conflict (listing_key, play_date) do update set
        (source, course_name, course_part, tee_time, status, opened_at, closed_at, last_event_type,
         last_event_at, open_price_krw, last_price_krw, change_count, reopen_count)
      = row(excluded.source, excluded.course_name, excluded.course_part, excluded.tee_time,
            excluded.status, excluded.opened_at, excluded.closed_at, excluded.last_event_type,
            excluded.last_event_at, excluded.open_price_krw, excluded.last_price_krw,
            excluded.change_count, excluded.reopen_count);
end
$fn$;

-- listing_lifetimes_redo(keys): an UPDATE's or DELETE's listings, recomputed; a listing whose
-- events are all gone loses its row.
create or replace function listing_lifetimes_redo(keys text[]) returns void
language plpgsql as $fn$
begin
    perform listing_lifetimes_lock(keys);
    perform listing_lifetimes_recompute(keys);
    delete from listing_lifetimes l
    where l.listing_key = any(keys)
      and not exists (select from booking_events e
                      where e.listing_key = l.listing_key and e.play_date = l.play_date);
end
$fn$;

create or replace function listing_lifetimes_after_insert() returns trigger
language plpgsql as $fn$
declare
    keys text[] := array(select distinct listing_key from new_events);
begin
    if cardinality(keys) = 0 then
        return null;
    end if;
    perform listing_lifetimes_lock(keys);
    perform listing_lifetimes_recompute(keys);
    return null;
end
$fn$;

create or replace function listing_lifetimes_after_update() returns trigger
language plpgsql as $fn$
begin
    perform listing_lifetimes_redo(array(select listing_key from old_events union select listing_key from new_events));
    return null;
end
$fn$;

create or replace function listing_lifetimes_after_delete() returns trigger
language plpgsql as $fn$
begin
    perform listing_lifetimes_redo(array(select distinct listing_key from old_events));
    return null;
end
$fn$;

-- TRUNCATE booking_events empties the projection, and the table a rebuild is building.
create or replace function listing_lifetimes_after_truncate() returns trigger
language plpgsql as $fn$
begin
    perform pg_advisory_xact_lock(1319, 0);
    truncate listing_lifetimes;
    if to_regclass('listing_lifetimes_next') is not null then
        truncate listing_lifetimes_next;
    end if;
    return null;
end
$fn$;
