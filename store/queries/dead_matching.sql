-- The dead letters matching a DeadFilter, the part dead_list.sql and dead_select.sql share (each
-- fills it in at {{matching}}). A zero id, a null time and an empty reason mean no filter; the
-- reason matches case-insensitively anywhere in the error text (strpos, so % and _ are plain
-- characters).
select id, kafka_topic, kafka_partition, kafka_offset, raw_key, raw_value, error,
       first_failed_at, last_failed_at, attempts, raw_headers
from booking_events_dead
where ($1::bigint = 0 or id = $1)
  and ($2::timestamptz is null or last_failed_at >= $2)
  and ($3::text = '' or strpos(lower(error), lower($3)) > 0)
