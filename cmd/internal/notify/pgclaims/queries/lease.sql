-- A sender's next claims on its channel: its own, and any whose lease expired (the holder died),
-- none waiting for a retry; each with the latest close of its listing known (for the send-time check).
-- A fresh claim waits until its watch and crawl have had no new claim for $4 seconds (at most
-- 10 × $4), so that the matches of one crawl, claimed in several consumer batches, are leased and
-- sent together.
select key, watch, crawl_id, event, send_key, coalesce(send_part, 0), coalesce(send_parts, 0), attempts, claimed_at, backlog, resend,
       greatest((select c.closed_at from notification_closes c where c.listing_key = n.listing_key),
                (select max(b.occurred_at) from booking_events b
                 where b.listing_key = n.listing_key collate "C" and b.event_type = 'listing_closed'))
from notifications n
where status = 'sending' and channel = $1 and (lease_owner = $2 or lease_until < now())
  and (retry_at is null or retry_at <= now())
  and (claimed_at <= now() - 10 * $4::float8 * interval '1 second'
       or not exists (select 1 from notifications f
                      where f.status = 'sending' and f.channel = n.channel and f.watch = n.watch
                        and f.crawl_id = n.crawl_id and f.claimed_at > now() - $4::float8 * interval '1 second'))
order by claimed_at, key
limit $3
for update skip locked
