-- Before an attempt: count it (?1 keys as a JSON array, ?2 now); only claims still sending.
update claims set attempts = attempts + 1, retry_at = null, updated_at = ?2
where key in (select value from json_each(?1)) and status = 'sending'
