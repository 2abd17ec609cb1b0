-- crawler notifications: newest first (?1 status or '', ?2 watch or '', ?3 limit).
select key, watch, channel, event_id, crawl_id, event, status, coalesce(reason, ''), coalesce(error, ''),
       attempts, claimed_at, coalesce(sent_at, 0)
from claims
where (?1 = '' or status = ?1) and (?2 = '' or watch = ?2)
order by claimed_at desc, seq desc
limit ?3
