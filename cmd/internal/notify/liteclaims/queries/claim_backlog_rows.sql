-- Claim up to claimChunk backlog matches (listings open when their watch asked) in one
-- statement, rows as in claim_rows.sql (reason always empty, pending always 0). Each is sending, unless its watch
-- and channel has a claim of the listing's current lifetime already (any status, any
-- fingerprint: occurred_at is the listing's first-seen time; read from the covering index
-- claims_listing) or a later close of the listing is stored (skipped 'closed'). Never 'stale' at
-- claim time: its age counts from the claim. The statement does not see its own rows: the
-- caller puts no two matches of one watch, channel and listing in one statement.
insert into claims (key, watch, channel, event_id, crawl_id, listing_key, occurred_at, event,
                    status, reason, claimed_at, updated_at, backlog)
select m.key, m.watch, m.channel, m.event_id, m.crawl_id, m.listing_key, m.occurred_at, m.event,
       case when m.reason is null then 'sending' else 'skipped' end, m.reason, ?, ?, 1
from (select v.column1 as key, v.column2 as watch, v.column3 as channel, v.column4 as event_id,
             v.column5 as crawl_id, v.column6 as listing_key, v.column7 as occurred_at, v.column8 as event,
             case when exists (select 1 from closes c where c.listing_key = v.column6 and c.closed_at > v.column7)
                  then 'closed' end as reason
      from (/*rows*/) v) m
where not exists (select 1 from claims o where o.watch = m.watch and o.channel = m.channel and o.listing_key = m.listing_key
                                         and o.occurred_at >= m.occurred_at)
on conflict (key) do nothing
returning key, status, coalesce(reason, '')
