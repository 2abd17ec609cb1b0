-- Claim matches: one row per (watch, channel, event), sending under this process's lease, or
-- skipped with the reason (stale: older than the freshness window now; closed: a later close of the
-- listing is already stored, by the booking consumer or seen by the notifier). A row that exists
-- already (redelivery, replay, another notifier) claims nothing.
-- $1 key, $2 watch, $3 channel, $4 event_id, $5 crawl_id, $6 listing_key, $7 occurred_at,
-- $8 event (arrays, one element per match); $9 max age (s); $10 lease owner; $11 lease (s)
insert into notifications (key, watch, channel, event_id, crawl_id, listing_key, occurred_at, event,
                           status, reason, lease_owner, lease_until)
select m.key, m.watch, m.channel, m.event_id, m.crawl_id, m.listing_key, m.occurred_at, m.event,
       case when s.reason is null then 'sending' else 'skipped' end,
       s.reason,
       case when s.reason is null then $10::text end,
       case when s.reason is null then now() + $11::float8 * interval '1 second' end
from unnest($1::uuid[], $2::text[], $3::text[], $4::uuid[], $5::text[], $6::text[], $7::timestamptz[], $8::jsonb[])
         as m(key, watch, channel, event_id, crawl_id, listing_key, occurred_at, event)
cross join lateral (
    select case
        when m.occurred_at < now() - $9::float8 * interval '1 second' then 'stale'
        when exists (select 1 from booking_events b
                     where b.listing_key = m.listing_key collate "C" and b.event_type = 'listing_closed'
                       and b.occurred_at > m.occurred_at)
          or exists (select 1 from notification_closes c
                     where c.listing_key = m.listing_key collate "C" and c.closed_at > m.occurred_at) then 'closed'
    end as reason
) s
on conflict do nothing
returning key, channel, status, coalesce(reason, '')
