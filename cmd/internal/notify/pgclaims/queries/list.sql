-- booking-consumer notifications: newest first ($1 status or '', $2 watch or '', $3 limit).
select key, watch, channel, event_id, crawl_id, event->>'event_type', event->>'course_name',
       coalesce(event->>'course_part', ''), (event->>'price_krw')::bigint, (event->'previous'->>'price_krw')::bigint,
       event->>'play_date', event->>'tee_time', occurred_at, status, coalesce(reason, ''),
       coalesce(error, ''), attempts, claimed_at, sent_at
from notifications
where ($1 = '' or status = $1) and ($2 = '' or watch = $2)
order by claimed_at desc, key
limit $3
