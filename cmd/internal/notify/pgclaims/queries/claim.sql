-- Claim matches: one row per (watch, channel, event), sending under this process's lease, or
-- skipped with the reason (stale: older than the freshness window now; closed: a later close of the
-- listing is already stored, by the booking consumer or seen by the notifier). A row that exists
-- already (redelivery, replay, another notifier) claims nothing. A backlog match ($14: a listing
-- open when its watch asked; occurred_at is its first-seen time) is never stale at claim time, and
-- claims nothing when its watch and channel has a notification of the listing's current lifetime
-- already (occurred at or after its first-seen time: any status, any fingerprint).
-- $1 key, $2 watch, $3 channel, $4 event_id, $5 crawl_id, $6 listing_key, $7 occurred_at,
-- $8 event, $14 backlog, $15 pending (arrays, one element per match; a pending match is claimed
-- 'pending', unleased, to wait for its confirmation: notify.Claim.Pending); $9 max age (s); $10 lease owner; $11 lease (s);
-- $13 claim time (the batch's Now); $12 dry run (--dry-run): write nothing, and instead return what a claim would do with every
-- match: sending, skipped (with the reason), or 'claimed' for a match that already has a row.
with m as (
    select u.key, u.watch, u.channel, u.event_id, u.crawl_id, u.listing_key, u.occurred_at, u.event, u.backlog, u.pending, s.reason,
           u.backlog and exists (select 1 from notifications o
                                 where o.watch = u.watch and o.channel = u.channel
                                   and o.listing_key = u.listing_key collate "C" and o.occurred_at >= u.occurred_at) as answered
    from unnest($1::uuid[], $2::text[], $3::text[], $4::uuid[], $5::text[], $6::text[], $7::timestamptz[], $8::jsonb[], $14::boolean[],
                $15::boolean[])
             as u(key, watch, channel, event_id, crawl_id, listing_key, occurred_at, event, backlog, pending)
    cross join lateral (
        select case
            when not u.backlog and u.occurred_at < $13::timestamptz - $9::float8 * interval '1 second' then 'stale'
            when exists (select 1 from booking_events b
                         where b.listing_key = u.listing_key collate "C" and b.event_type = 'listing_closed'
                           and b.occurred_at > u.occurred_at)
              or exists (select 1 from notification_closes c
                         where c.listing_key = u.listing_key collate "C" and c.closed_at > u.occurred_at) then 'closed'
        end as reason
    ) s
), claimed as (
    insert into notifications (key, watch, channel, event_id, crawl_id, listing_key, occurred_at, event,
                               status, reason, lease_owner, lease_until, backlog)
    select key, watch, channel, event_id, crawl_id, listing_key, occurred_at, event,
           case when reason is not null then 'skipped' when pending then 'pending' else 'sending' end,
           reason,
           case when reason is null and not pending then $10::text end,
           case when reason is null and not pending then now() + $11::float8 * interval '1 second' end,
           backlog
    from m
    where not $12::boolean and not answered
    on conflict do nothing
    returning key, channel, status, coalesce(reason, '')
)
select * from claimed
union all
select m.key, m.channel,
       case when n.key is not null or m.answered then 'claimed'
            when m.reason is not null then 'skipped' when m.pending then 'pending' else 'sending' end,
       coalesce(m.reason, '')
from m
left join notifications n on n.key = m.key
where $12::boolean
