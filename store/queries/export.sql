-- Export: stored payloads in a stable order. Null bounds and an empty source mean "no filter".
select payload::text
from booking_events
where ($1::timestamptz is null or occurred_at >= $1)
  and ($2::timestamptz is null or occurred_at < $2)
  and ($3::text = '' or source = $3)
order by occurred_at, event_id
