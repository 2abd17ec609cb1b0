-- The clock-dependent final layer of booking_lifetimes, written once: the expiry (an open listing
-- whose tee time has passed is 'expired', closed at its tee time) and the lifetime, computed at
-- query time from the stored columns. views.ClockLayer fills in the view's name (:view) and the
-- relation it reads (:stored): booking_lifetimes_from_events over
-- booking_lifetimes_from_events_stored (the definition), and booking_lifetimes over
-- listing_lifetimes (the served view, store/projection.go).
--
-- The view's columns are the stored relation's, read from its catalog in its column order, so a
-- column added to the definition's stored layer (at its end) is served without an edit here:
-- every column passes through except status and closed_at, replaced in place by their clock
-- values, and lifetime, computed, follows last_event_at. That order is the served view's and
-- must stay it: the projection's swap re-points booking_lifetimes with "create or replace", which
-- refuses to reorder or drop a column (and views users built on it read columns by name).
-- "create or replace": the swap re-points booking_lifetimes at the new table without dropping
-- it, so views users built on booking_lifetimes survive a rebuild.
--
-- Cheap per row: "now" (clock_now) and "now" on the sites' wall clock (clock_local) are scalar
-- subqueries, InitPlans computed once a query, not once a row. Whether a tee time has passed is
-- decided on the wall clock (tee_local <= clock_local: a timestamp comparison), and the tee time
-- is converted to an instant (tee_at, a time-zone conversion, about 1 us) only for the listings
-- that expired by the clock. The two tests agree wherever the zone's offset does not move back,
-- which Asia/Seoul's has not since 1988 (no daylight saving time).
--
-- "Now" is the session setting golf.now when it is set (the dashboard's --as-of sets it with
-- set_config('golf.now', ..., true) in its read-only transaction, so every number on a page is as
-- of that time), else now().
do $clock$
declare
    columns text;
    anchors int;
begin
    select string_agg(
               case a.attname
                   when 'status' then
                       $$case when status = 'open' and tee_local <= s.clock_local then 'expired' else status end as status$$
                   when 'closed_at' then
                       $$case when status = 'open' and tee_local <= s.clock_local then tee_at else closed_at end as closed_at$$
                   when 'last_event_at' then
                       $$last_event_at,
    coalesce(case when status = 'open' and tee_local <= s.clock_local then tee_at else closed_at end, s.clock_now)
        - opened_at as lifetime$$
                   else quote_ident(a.attname)
               end, E',\n    ' order by a.attnum),
           count(*) filter (where a.attname in ('status', 'opened_at', 'closed_at', 'last_event_at'))
      into columns, anchors
      from pg_attribute a
     where a.attrelid = ':stored'::regclass and a.attnum > 0 and not a.attisdropped;
    if anchors is distinct from 4 then
        raise exception 'clock layer of %: % lacks one of status, opened_at, closed_at, last_event_at',
            ':view', ':stored';
    end if;
    execute 'create or replace view :view as
select
    ' || columns || $$
from (
    select s.*, s.play_date + s.tee_time as tee_local,
           (s.play_date + s.tee_time) at time zone 'Asia/Seoul' as tee_at,
           (select coalesce(nullif(current_setting('golf.now', true), '')::timestamptz, now())) as clock_now,
           (select coalesce(nullif(current_setting('golf.now', true), '')::timestamptz, now())
                   at time zone 'Asia/Seoul') as clock_local
    from :stored s
) s$$;
end
$clock$;
