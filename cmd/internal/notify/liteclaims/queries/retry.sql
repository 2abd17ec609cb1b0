-- A transient failure: keep the error and the time of the next attempt (?1 keys as a JSON array,
-- ?2 error, ?3 retry at, ?4 now).
update claims set error = nullif(?2, ''), retry_at = ?3, updated_at = ?4
where key in (select value from json_each(?1)) and status = 'sending'
