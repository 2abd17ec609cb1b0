-- booking_lifetimes_fast: booking_lifetimes answered from the listing_lifetimes projection. The
-- final layer is the one of views/booking_lifetimes.sql (the clock-dependent expiry and lifetime,
-- computed at query time from stored columns); keep the two identical (lifetimes --verify and the
-- projection tests compare them row for row). Created by every projection (re)build, which swaps
-- the table underneath.
create view booking_lifetimes_fast as
select
    listing_key,
    source,
    course_name,
    course_part,
    play_date,
    tee_time,
    case when status = 'open' and tee_at <= now() then 'expired' else status end as status,
    opened_at,
    case when status = 'open' and tee_at <= now() then tee_at else closed_at end as closed_at,
    last_event_type,
    last_event_at,
    coalesce(case when status = 'open' and tee_at <= now() then tee_at else closed_at end, now())
        - opened_at                                                              as lifetime,
    open_price_krw,
    last_price_krw,
    change_count,
    reopen_count
from (
    select s.*, (s.play_date + s.tee_time) at time zone 'Asia/Seoul' as tee_at
    from listing_lifetimes s
) s;
