-- Claim one match: sending, or skipped with the reason (?10: 'stale' decided by the caller, or
-- empty); 'closed' when a later close of the listing is stored. A key that exists claims nothing.
-- ?1 key, ?2 watch, ?3 channel, ?4 event_id, ?5 crawl_id, ?6 listing_key, ?7 occurred_at,
-- ?8 event, ?9 now, ?10 reason.
insert into claims (key, watch, channel, event_id, crawl_id, listing_key, occurred_at, event,
                    status, reason, claimed_at, updated_at)
select ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8,
       case when r.reason is null then 'sending' else 'skipped' end, r.reason, ?9, ?9
from (select coalesce(nullif(?10, ''),
                      case when exists (select 1 from closes c where c.listing_key = ?6 and c.closed_at > ?7)
                           then 'closed' end) as reason) r
where true
on conflict (key) do nothing
returning status, coalesce(reason, '')
