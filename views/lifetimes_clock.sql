-- The clock-dependent final layer of booking_lifetimes, written once: the expiry (an open listing
-- whose tee time has passed is 'expired', closed at its tee time) and the lifetime, computed at
-- query time from the stored columns. views.ClockLayer fills in the view's name (:view) and the
-- relation it reads (:stored): booking_lifetimes_from_events over
-- booking_lifetimes_from_events_stored (the definition), and booking_lifetimes over
-- listing_lifetimes (the served view, store/projection.go).
--
-- Cheap per row: "now" (clock_now) and "now" on the sites' wall clock (clock_local) are scalar
-- subqueries, InitPlans computed once a query, not once a row. Whether a tee time has passed is
-- decided on the wall clock (tee_local <= clock_local: a timestamp comparison), and the tee time
-- is converted to an instant (tee_at, a time-zone conversion, about 1 us) only for the listings
-- that expired by the clock. The two tests agree wherever the zone's offset does not move back,
-- which Asia/Seoul's has not since 1988 (no daylight saving time).
--
-- "create or replace": the projection's swap re-points booking_lifetimes at the new table
-- without dropping it, so views users built on booking_lifetimes survive a rebuild.
--
-- "Now" is the session setting golf.now when it is set (the dashboard's --as-of sets it with
-- set_config('golf.now', ..., true) in its read-only transaction, so every number on a page is as
-- of that time), else now().
create or replace view :view as
select
    listing_key,
    source,
    course_name,
    course_part,
    play_date,
    tee_time,
    case when status = 'open' and tee_local <= s.clock_local then 'expired' else status end as status,
    opened_at,
    case when status = 'open' and tee_local <= s.clock_local then tee_at else closed_at end as closed_at,
    last_event_type,
    last_event_at,
    coalesce(case when status = 'open' and tee_local <= s.clock_local then tee_at else closed_at end, s.clock_now)
        - opened_at                                                               as lifetime,
    open_price_krw,
    last_price_krw,
    change_count,
    reopen_count
from (
    select s.*, s.play_date + s.tee_time as tee_local,
           (s.play_date + s.tee_time) at time zone 'Asia/Seoul' as tee_at,
           (select coalesce(nullif(current_setting('golf.now', true), '')::timestamptz, now())) as clock_now,
           (select coalesce(nullif(current_setting('golf.now', true), '')::timestamptz, now())
                   at time zone 'Asia/Seoul') as clock_local
    from :stored s
) s;
