-- Claim up to claimChunk matches in one statement (not one per match: the claim transaction of a
-- site's first crawl holds hundreds). The rows placeholder becomes a VALUES list of the matches,
-- each (key, watch, channel, event_id, crawl_id, listing_key, occurred_at, event, reason, pending),
-- reason 'stale' decided by the caller or empty, pending 1 for a claim that waits for its
-- confirmation (notify.Claim.Pending). The parameters are plain ? (the driver looks a numbered
-- one's name up in a list as long as the statement's): the select list's two, now, then the rows'.
-- Each match is sending (or pending), or skipped with the reason ('closed' when a later close of the
-- listing is stored). A key that exists claims nothing. Returns the key, status and reason of each claim made.
insert into claims (key, watch, channel, event_id, crawl_id, listing_key, occurred_at, event,
                    status, reason, claimed_at, updated_at)
select m.key, m.watch, m.channel, m.event_id, m.crawl_id, m.listing_key, m.occurred_at, m.event,
       case when m.reason is not null then 'skipped' when m.pending then 'pending' else 'sending' end, m.reason, ?, ?
from (select v.column1 as key, v.column2 as watch, v.column3 as channel, v.column4 as event_id,
             v.column5 as crawl_id, v.column6 as listing_key, v.column7 as occurred_at, v.column8 as event,
             v.column10 as pending,
             coalesce(nullif(v.column9, ''),
                      case when exists (select 1 from closes c where c.listing_key = v.column6 and c.closed_at > v.column7)
                           then 'closed' end) as reason
      from (/*rows*/) v) m
where true
on conflict (key) do nothing
returning key, status, coalesce(reason, '')
