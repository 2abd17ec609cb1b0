-- RetryDead, step 1: the next chunk of dead letters matching the filters (as in dead_list.sql),
-- by id after $4, so that a retry walks the table once whatever it changes behind itself.
select id, kafka_topic, kafka_partition, kafka_offset, raw_key, raw_value, error,
       first_failed_at, last_failed_at, attempts
from booking_events_dead
where ($1::bigint = 0 or id = $1)
  and ($2::timestamptz is null or last_failed_at >= $2)
  and ($3::text = '' or strpos(lower(error), lower($3)) > 0)
  and id > $4
order by id
limit $5
