-- booking_lifetimes: one row per listing with its latest state and its CURRENT lifetime, computed
-- from booking_events alone (no derived table to drift from the events).
--
-- Order of a listing's events: occurred_at, then event type (opened < changed < closed), then
-- event_id: deterministic, never arrival order. A lifetime starts at the listing's first event and
-- at every non-close event that follows a close (a reopen); a close after a close stays in the
-- lifetime it ended.
--
-- Performance: every window is partitioned by (play_date, listing_key) and the outer level groups
-- by the same columns, so PostgreSQL pushes a filter on play_date or listing_key down to the
-- index scan on booking_events (see EXPLAIN in views/bench_test.go).
select pg_advisory_xact_lock(7305218846250914); -- two installers at once: one after the other

drop view if exists booking_lifetimes;

create view booking_lifetimes as
select
    listing_key,
    source,
    course_name,
    course_part,
    play_date,
    tee_time,
    status,
    opened_at,
    closed_at,
    last_event_type,
    last_event_at,
    coalesce(closed_at, now()) - opened_at as lifetime,
    open_price_krw,
    last_price_krw,
    change_count,
    reopen_count
from (
    select
        play_date,
        listing_key,
        max(source)                                              as source,
        max(course_name)                                         as course_name,
        max(course_part)                                         as course_part,
        max(tee_time)                                            as tee_time,
        case when max(last_type) = 'listing_closed' then max(last_close_reason) else 'open' end
                                                                 as status,
        max(occurred_at) filter (where is_start)                 as opened_at,
        case when max(last_type) = 'listing_closed' then max(last_at) end
                                                                 as closed_at,
        max(last_type)                                           as last_event_type,
        max(last_at)                                             as last_event_at,
        max(price_krw) filter (where is_start)                   as open_price_krw,
        max(last_price)                                          as last_price_krw,
        count(*) filter (where event_type = 'listing_changed')::int
                                                                 as change_count,
        max(n_lifetimes) - 1                                     as reopen_count
    from (
        select
            play_date, listing_key, source, course_name, course_part, tee_time,
            event_type, occurred_at, price_krw, is_start,
            sum(is_start::int) over w                            as lifetime_no,
            sum(is_start::int) over w_all                        as n_lifetimes,
            last_value(event_type) over w_all                    as last_type,
            last_value(close_reason) over w_all                  as last_close_reason,
            last_value(occurred_at) over w_all                   as last_at,
            last_value(price_krw) over w_all                     as last_price
        from (
            select
                play_date, listing_key, source, course_name, course_part, tee_time,
                event_type, occurred_at, price_krw, close_reason, type_rank, event_id,
                coalesce(lag(event_type) over w = 'listing_closed' and event_type <> 'listing_closed',
                         true)                                   as is_start
            from (
                select e.*,
                       case e.event_type when 'listing_opened' then 0
                                         when 'listing_changed' then 1
                                         else 2 end              as type_rank
                from booking_events e
            ) ranked
            window w as (partition by play_date, listing_key order by occurred_at, type_rank, event_id)
        ) flagged
        window w as (partition by play_date, listing_key order by occurred_at, type_rank, event_id),
               w_all as (w rows between unbounded preceding and unbounded following)
    ) numbered
    where lifetime_no = n_lifetimes
    group by play_date, listing_key
) current_lifetime;
