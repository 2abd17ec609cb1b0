-- A transient failure: extend this sender's lease on rows it holds ($1 keys, $2 owner, $3 seconds
-- from now) past the wait, keep the error ($4) and the time of the next attempt ($5).
update notifications set lease_until = now() + $3::float8 * interval '1 second', error = nullif($4, ''), retry_at = $5
where key = any($1::uuid[]) and status = 'sending' and lease_owner = $2
