-- Extend this sender's lease on rows it holds ($1 keys, $2 owner, $3 seconds from now).
update notifications set lease_until = now() + $3::float8 * interval '1 second'
where key = any($1::uuid[]) and status = 'sending' and lease_owner = $2
