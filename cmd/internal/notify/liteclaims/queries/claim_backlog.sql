-- Claim one backlog match (a listing open when its watch asked): sending, unless the watch and
-- channel has a claim of the listing's current lifetime already (any status, any fingerprint:
-- ?7 is the listing's first-seen time) or a later close of the listing is stored (skipped
-- 'closed'). Never 'stale' at claim time: its age counts from the claim.
-- ?1 key, ?2 watch, ?3 channel, ?4 event_id, ?5 crawl_id, ?6 listing_key, ?7 occurred_at,
-- ?8 event, ?9 now.
insert into claims (key, watch, channel, event_id, crawl_id, listing_key, occurred_at, event,
                    status, reason, claimed_at, updated_at, backlog)
select ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8,
       case when r.reason is null then 'sending' else 'skipped' end, r.reason, ?9, ?9, 1
from (select case when exists (select 1 from closes c where c.listing_key = ?6 and c.closed_at > ?7)
                  then 'closed' end as reason) r
where not exists (select 1 from claims o where o.watch = ?2 and o.channel = ?3 and o.listing_key = ?6 and o.occurred_at >= ?7)
on conflict (key) do nothing
returning status, coalesce(reason, '')
