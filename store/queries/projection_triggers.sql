-- The projection's trigger functions (the triggers are migration 007's), installed by the
-- rebuild's swap in the transaction that puts the table they write in place. Each runs once per
-- statement on booking_events, with the statement's rows as transition tables, takes the
-- listings' locks (listing_lifetimes_lock, below) in a statement of its own and then
-- refreshes their rows: every statement after the lock sees what a concurrent writer of the same
-- listings committed.
--
-- :upsert_set is "(c, ...) = row(excluded.c, ...)" over every column of listing_lifetimes but its
-- key (listing_key, play_date), in table order, filled in from the catalog when the functions are
-- installed (store/projection_upsert.go), like :fold_set ("(c, ...) = (n.c, ...)", the same
-- columns) and :all_columns (every column, key included): the recompute's upsert and the fold's
-- UPDATE and INSERT write the whole row, and their column lists are not written here; only the
-- fold's `next` select computes each column by name.
--
-- listing_lifetimes_lock(keys): the locks of a write touching keys, then the pending log for a
-- rebuild in progress. A transaction-scoped advisory lock lives until the transaction ends, so
-- the listing locks are counted per transaction (golf.listing_locks, a transaction-local
-- setting: gone at commit or rollback, and undone with a rolled-back savepoint like the locks it
-- counts):
--   * while the transaction's count stays at or below 2000 listings: the rebuild's (1319, 0) lock
--     shared, and one advisory lock per listing (1320, hashtext(key)), taken in sorted order in a
--     statement of their own, so the recomputation that follows sees whatever a concurrent writer
--     of the same listing committed, and two single-statement writers wait instead of deadlocking.
--   * once a statement would pass 2000: the (1319, 0) lock exclusive (upgrading the shared one an
--     earlier statement took), the one the rebuild takes to swap. It waits for every writer and
--     blocks them until the transaction ends, but it is one lock: the shared lock table
--     (max_locks_per_transaction x max_connections, about 13,000 on the defaults) is shared by
--     every session, and a transaction of many statements that kept taking a lock per listing
--     failed with "out of shared memory" past about 24,000 and, before that, left the consumer's
--     batches none (SQLSTATE 53200).
--   The count is of keys asked for, not of distinct locks held: a listing written by two
--   statements counts twice, so the switch comes early, never late. Two multi-statement
--   transactions that take the same listings in opposite order (or both upgrade the shared
--   (1319, 0) to exclusive, or one upgrades while the other waits for a listing lock it holds)
--   deadlock: PostgreSQL aborts one with 40P01, which store.Decide calls transient, so the
--   consumer retries its batch; other clients retry the transaction.
create or replace function listing_lifetimes_lock(keys text[]) returns void
language plpgsql as $fn$
declare
    taken bigint := coalesce(nullif(current_setting('golf.listing_locks', true), ''), '0')::bigint;
    total bigint := taken + cardinality(keys);
begin
    if total > 2000 then
        perform pg_advisory_xact_lock(1319, 0);
    else
        perform pg_advisory_xact_lock_shared(1319, 0);
        perform count(pg_advisory_xact_lock(1320, h))
        from (select distinct hashtext(k) as h from unnest(keys) as k order by 1) as sorted;
    end if;
    perform set_config('golf.listing_locks', total::text, true);
    insert into listing_lifetimes_pending (listing_key)
    select unnest(keys) from listing_lifetimes_state where rebuilding;
end
$fn$;

-- listing_lifetimes_recompute(keys): the rows of the listings keys again, from all their stored
-- events, by the definition's own logic (the key filter reaches booking_events_listing_idx: the
-- view's windows are partitioned by listing_key), upserted: when no indexed column changes (a
-- price change, most events) PostgreSQL updates the row in place without touching the indexes
-- (HOT; the table has fillfactor 70 and no index on a column a refresh changes,
-- store/queries/projection_build.sql).
create or replace function listing_lifetimes_recompute(keys text[]) returns void
language plpgsql as $fn$
begin
    insert into listing_lifetimes
    select * from booking_lifetimes_from_events_stored where listing_key = any(keys)
    on conflict (listing_key, play_date) do update set :upsert_set;
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

-- listing_lifetimes_after_insert: the new events' listings. Most writes are appends: every new
-- event of the listing is strictly newer (occurred_at after the stored last_event_at) than
-- everything stored for it, or the listing is new. Those are FOLDED into the stored row: the
-- definition's window passes (views/booking_lifetimes_from_events.sql) run over the new events
-- alone, seeded with the stored row (its last event type decides whether the first new event
-- starts a lifetime; its opened_at, open price, change and reopen counts carry over while no new
-- lifetime starts), without reading the listing's older events. A listing with a new event at or
-- before its stored last one (out of order, or a tie, which the event type and event_id order)
-- is recomputed from all its events. TestProjectionEqualsViewOverRandomHistories proves the
-- two equal over out-of-order, duplicate and equal-timestamp delivery.
--
-- The fold writes a stored listing's row with a plain UPDATE by the row id it read (ctid: the
-- listing's lock, held since the statement before, keeps anyone else from moving the row) and a
-- new listing's with a plain INSERT: no speculative insertion, no conflict check, no second
-- key lookup (ON CONFLICT DO UPDATE cost about half again as much when measured). It runs
-- through EXECUTE, so it is planned for every statement against the table's size and the
-- statement's keys: PL/pgSQL would otherwise keep a plan made while listing_lifetimes was empty
-- for the whole session (TestProjectionFoldsFromAnEmptyTableInOneSession). random_page_cost 1.1
-- (the usual value for data in memory; PostgreSQL's default 4 prices disk seeks) lets the planner
-- fetch the updated rows by id (Tid Scan, one per row) instead of reading and hashing every row of
-- the table for every statement (at the default, one of the two largest costs in a perf profile of
-- the trigger in the crawl shape, with the index inserts of updates that were not HOT).
create or replace function listing_lifetimes_after_insert() returns trigger
language plpgsql set random_page_cost = 1.1 as $fn$
declare
    keys text[] := array(select distinct listing_key from new_events);
    redo text[];
begin
    if cardinality(keys) = 0 then
        return null;
    end if;
    perform listing_lifetimes_lock(keys);

    execute $sql$
    with stored as ( -- the stored rows of the statement's listings, one key lookup each
        select l.*
        from (select distinct listing_key, play_date from new_events) k
        cross join lateral ( -- "offset 0" keeps this a lookup per listing: never a scan of the table
            select s.ctid as row_id, s.listing_key, s.play_date, s.last_event_at, s.last_event_type,
                   s.opened_at, s.open_price_krw, s.change_count, s.reopen_count
            from listing_lifetimes s
            where s.listing_key = k.listing_key and s.play_date = k.play_date
            offset 0
        ) l
    ), ordered as ( -- the new events in the definition's order, each with its listing's stored row
        select e.listing_key, e.play_date, e.source, e.course_name, e.course_part, e.tee_time, e.event_type,
               e.close_reason, e.occurred_at, e.price_krw, l.row_id, l.row_id is not null as stored,
               l.last_event_at as stored_last_at, l.opened_at as stored_opened_at,
               l.open_price_krw as stored_open_price, l.change_count as stored_changes,
               l.reopen_count as stored_reopens,
               min(e.occurred_at) over p                                               as first_at,
               coalesce(lag(e.event_type) over w, l.last_event_type)                   as before_type,
               lead(e.event_type) over w is null                                       as is_last,
               count(*) filter (where e.event_type = 'listing_changed') over w         as changes
        from new_events e
        left join stored l on l.listing_key = e.listing_key and l.play_date = e.play_date
        cross join lateral (
            select case e.event_type when 'listing_opened' then 0
                                     when 'listing_changed' then 1
                                     else 2 end as type_rank
        ) r
        window w as (partition by e.play_date, e.listing_key order by e.occurred_at, r.type_rank, e.event_id),
               p as (partition by e.play_date, e.listing_key)
    ), marked as ( -- only the appended listings (the rest is redo's); the event before the first is the stored last
        select o.*, (o.before_type is null
                     or (o.before_type = 'listing_closed' and o.event_type <> 'listing_closed')) as is_start
        from ordered o
        where not o.stored or o.first_at > o.stored_last_at
    ), folded as ( -- per listing (whole-partition windows: no join): the starts among the new events, the latest one's values
        select m.*,
               count(*) filter (where is_start) over p                                 as starts,
               max(occurred_at) filter (where is_start) over p                         as new_opened_at,
               max(array[extract(epoch from occurred_at), price_krw]) filter (where is_start) over p
                                                                                       as open_start,
               max(changes - (event_type = 'listing_changed')::int) filter (where is_start) over p
                                                                                       as changes_before_open,
               max(changes) over p                                                     as new_changes
        from marked m
        window p as (partition by play_date, listing_key)
    ), next as ( -- each appended listing's new row
        select row_id, listing_key, source, course_name, course_part, play_date, tee_time,
               case when event_type = 'listing_closed' then close_reason else 'open' end as status,
               case when starts > 0 then new_opened_at else stored_opened_at end as opened_at,
               case when event_type = 'listing_closed' then occurred_at end as closed_at,
               event_type as last_event_type,
               occurred_at as last_event_at,
               case when starts > 0 then open_start[2]::bigint else stored_open_price end as open_price_krw,
               price_krw as last_price_krw,
               (case when starts > 0 then new_changes - changes_before_open
                     else stored_changes + new_changes end)::int as change_count,
               (coalesce(stored_reopens + 1, 0) + starts - 1)::int as reopen_count
        from folded
        where is_last
    ), fold_stored as ( -- a stored listing's row, updated where it is (by its row id: no second lookup)
        update listing_lifetimes t set :fold_set
        from next n
        where n.row_id is not null and t.ctid = n.row_id
    ), fold_new as ( -- a new listing's row
        insert into listing_lifetimes (:all_columns)
        select :all_columns
        from next
        where row_id is null
    )
    select coalesce(array_agg(distinct listing_key) filter (where stored and first_at <= stored_last_at), '{}')
    from ordered
    $sql$ into redo;

    if cardinality(redo) > 0 then
        perform listing_lifetimes_recompute(redo);
    end if;
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
