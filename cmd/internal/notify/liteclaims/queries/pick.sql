-- A channel's claims ready to send (?1 channel, ?2 now, ?3 limit): every one still sending and not
-- waiting for a retry, in claim order, with the latest close of its listing (0: none).
select c.key, c.watch, c.crawl_id, c.event, coalesce(c.send_key, ''), coalesce(c.send_part, 0), coalesce(c.send_parts, 0),
       c.attempts, c.claimed_at, c.backlog, c.resend,
       coalesce((select x.closed_at from closes x where x.listing_key = c.listing_key), 0)
from claims c
where c.status = 'sending' and c.channel = ?1 and (c.retry_at is null or c.retry_at <= ?2)
order by c.seq
limit ?3
