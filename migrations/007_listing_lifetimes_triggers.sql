-- listing_lifetimes is kept by triggers on booking_events: every INSERT (INSERT ...
-- SELECT, COPY, the consumer's batches, dead retry), UPDATE and DELETE refreshes the listings it
-- touched in the same transaction, statement-level with transition tables; TRUNCATE empties the
-- projection. No write path can leave booking_lifetimes stale, except a restore with triggers
-- disabled (pg_restore --disable-triggers, session_replication_role = replica): run
-- booking-consumer lifetimes --rebuild after it.
--
-- The trigger functions created here are placeholders that only take the locks and log the keys
-- for a rebuild in progress; the projection's build installs the real ones
-- (store/queries/projection_triggers.sql) in the transaction that swaps its table in, so the
-- functions always match the table's columns.
--
-- listing_lifetimes_lock(keys): the locks of a write touching keys, then the pending log. This
-- first version bounded the listing locks per statement: up to 2000 listings one transaction-scoped
-- advisory lock per listing (1320, hashtext(key)) beside the rebuild's (1319, 0) shared, above that
-- (1319, 0) exclusive. The locks live for the transaction, though, so several statements of one
-- transaction added up past the shared lock table ("out of shared memory"). The projection's
-- build replaces it with the one in store/queries/projection_triggers.sql, which counts the
-- listing locks per transaction; its comment has the rules and the deadlocks they allow.
create function listing_lifetimes_lock(keys text[]) returns void
language plpgsql as $fn$
begin
    if cardinality(keys) > 2000 then
        perform pg_advisory_xact_lock(1319, 0);
    else
        perform pg_advisory_xact_lock_shared(1319, 0);
        perform count(pg_advisory_xact_lock(1320, h))
        from (select distinct hashtext(k) as h from unnest(keys) as k order by 1) as sorted;
    end if;
    insert into listing_lifetimes_pending (listing_key)
    select unnest(keys) from listing_lifetimes_state where rebuilding;
end
$fn$;

create function listing_lifetimes_after_insert() returns trigger
language plpgsql as $fn$
begin
    perform listing_lifetimes_lock(array(select distinct listing_key from new_events));
    return null;
end
$fn$;

create function listing_lifetimes_after_update() returns trigger
language plpgsql as $fn$
begin
    perform listing_lifetimes_lock(array(select listing_key from old_events union select listing_key from new_events));
    return null;
end
$fn$;

create function listing_lifetimes_after_delete() returns trigger
language plpgsql as $fn$
begin
    perform listing_lifetimes_lock(array(select distinct listing_key from old_events));
    return null;
end
$fn$;

create function listing_lifetimes_after_truncate() returns trigger
language plpgsql as $fn$
begin
    perform pg_advisory_xact_lock(1319, 0);
    return null;
end
$fn$;

create trigger booking_events_projection_insert after insert on booking_events
    referencing new table as new_events
    for each statement execute function listing_lifetimes_after_insert();
create trigger booking_events_projection_update after update on booking_events
    referencing old table as old_events new table as new_events
    for each statement execute function listing_lifetimes_after_update();
create trigger booking_events_projection_delete after delete on booking_events
    referencing old table as old_events
    for each statement execute function listing_lifetimes_after_delete();
create trigger booking_events_projection_truncate after truncate on booking_events
    for each statement execute function listing_lifetimes_after_truncate();
