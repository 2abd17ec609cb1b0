-- A sender's next claims on its channel: its own, and any whose lease expired (the holder died).
select key, watch, crawl_id, event, send_key, attempts
from notifications
where status = 'sending' and channel = $1 and (lease_owner = $2 or lease_until < now())
order by claimed_at, key
limit $3
for update skip locked
