-- RetryDead, step 1: the next chunk of dead letters matching the filters (dead_matching.sql), by
-- id after $4, so that a retry walks the table once whatever it changes behind itself.
{{matching}}
  and id > $4
order by id
limit $5
