-- booking_lifetimes_from_events: THE definition of booking_lifetimes, one row per listing with its
-- latest state and its CURRENT lifetime, computed from booking_events alone. Users query
-- booking_lifetimes, the same rows answered from the listing_lifetimes projection (the
-- same final layer, views/lifetimes_clock.sql, over the stored table; store/projection.go);
-- booking-consumer lifetimes --verify, the tests and the chaos checks compare the two.
--
-- Order of a listing's events: occurred_at, then event type (opened < changed < closed), then
-- event_id: deterministic, never arrival order. A lifetime starts at the listing's first event and
-- at every non-close event that follows a close (a reopen); a close after a close stays in the
-- lifetime it ended. Starts are strictly increasing in occurred_at (at equal times a close sorts
-- after everything else), so "the current lifetime" is every event at or after the last start.
--
-- A lost close (the publisher gave up on it, or a reset snapshot never re-derived it) must not leave
-- a listing open forever: a listing whose last event is not a close and whose tee time has passed
-- (play_date + tee_time in Asia/Seoul, the sites' zone, at or before now()) is reported as
-- 'expired' with closed_at = that tee time and lifetime = tee time - opened_at. This is decided
-- at query time (now()), so the same events read later can turn an open listing into an expired
-- one; a close event, when there is one, always wins. last_event_type/last_event_at stay the
-- stored last event.
--
-- Two layers, so that a projection stores what the events decide and reads the clock at query
-- time: booking_lifetimes_from_events_stored holds every column that depends on
-- the events alone (what the listing_lifetimes projection stores, see store/projection.go);
-- booking_lifetimes_from_events is it plus the parts that depend on the clock (the expiry above,
-- lifetime), computed at query time (views/lifetimes_clock.sql). booking_lifetimes, the served
-- view, is the same final layer over the projection table; it is not made here but by the
-- projection's build (store/projection.go), so it exists only once the projection does.
--
-- How: one sort, two window passes, then the last row of each listing:
--   ordered      lag/lead mark starts and the last row; running count of changes
--   per_listing  number of starts, time, price and change count at the latest start, over the
--                whole listing (no ORDER BY: each aggregate is computed once a listing, not once
--                an event; only the last row is kept, whose running frame is the whole listing)
--   last row     everything the view shows
-- Every window is partitioned by (play_date, listing_key), so PostgreSQL pushes a filter on either
-- column down to the index scan on booking_events (EXPLAIN in views/bench_test.go).
select pg_advisory_xact_lock(7305218846250914); -- two installers at once: one after the other

drop view if exists booking_lifetimes_from_events;
drop view if exists booking_lifetimes_from_events_stored;

create view booking_lifetimes_from_events_stored as
select
    listing_key,
    source,
    course_name,
    course_part,
    play_date,
    tee_time,
    case when event_type = 'listing_closed' then close_reason else 'open' end as status,
    opened_at,
    case when event_type = 'listing_closed' then occurred_at end                 as closed_at,
    event_type                                                                   as last_event_type,
    occurred_at                                                                  as last_event_at,
    open_start[2]::bigint                                                        as open_price_krw,
    price_krw                                                                    as last_price_krw,
    (changes - changes_before_open)::int                                         as change_count,
    (starts - 1)::int                                                            as reopen_count
from (
    select
        ordered.*,
        count(*) filter (where is_start) over w                                  as starts,
        max(occurred_at) filter (where is_start) over w                          as opened_at,
        max(array[extract(epoch from occurred_at), price_krw]) filter (where is_start) over w
                                                                                 as open_start,
        max(changes - (event_type = 'listing_changed')::int) filter (where is_start) over w
                                                                                 as changes_before_open
    from (
        select
            e.listing_key, e.source, e.course_name, e.course_part, e.play_date, e.tee_time,
            e.event_type, e.close_reason, e.occurred_at, e.price_krw, e.event_id, r.type_rank,
            coalesce(lag(e.event_type) over w = 'listing_closed' and e.event_type <> 'listing_closed',
                     true)                                                       as is_start,
            lead(e.event_type) over w is null                                    as is_last,
            count(*) filter (where e.event_type = 'listing_changed') over w      as changes
        from booking_events e
        cross join lateral (
            select case e.event_type when 'listing_opened' then 0
                                     when 'listing_changed' then 1
                                     else 2 end as type_rank
        ) r
        window w as (partition by e.play_date, e.listing_key
                     order by e.occurred_at, r.type_rank, e.event_id)
    ) ordered
    window w as (partition by play_date, listing_key)
) per_listing
where is_last;

-- The clock-dependent layer, booking_lifetimes_from_events over
-- booking_lifetimes_from_events_stored, is views/lifetimes_clock.sql (shared with the served
-- booking_lifetimes over listing_lifetimes); Sources installs it right after this file.
