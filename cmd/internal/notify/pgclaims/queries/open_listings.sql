-- The backlog's listings: every listing open now in booking_lifetimes, as the start event of its
-- current lifetime (its id; occurred_at = opened_at, the first-seen time) and its last event (the
-- values it shows now). The start is the listing's event at opened_at, an opening before a change.
select s.payload, l.payload
from booking_lifetimes b
cross join lateral (
    select e.payload from booking_events e
    where e.listing_key = b.listing_key and e.play_date = b.play_date and e.occurred_at = b.opened_at
      and e.event_type <> 'listing_closed'
    order by e.event_type = 'listing_changed', e.event_id
    limit 1) s
cross join lateral (
    select e.payload from booking_events e
    where e.listing_key = b.listing_key and e.play_date = b.play_date and e.event_type <> 'listing_closed'
    order by e.occurred_at desc, e.event_type = 'listing_changed' desc, e.event_id desc
    limit 1) l
where b.status = 'open'
order by b.play_date, b.tee_time, b.listing_key
