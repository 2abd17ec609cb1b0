-- Before an attempt: extend the lease and count it, only while this sender still holds the rows.
update notifications
set lease_until = now() + $3::float8 * interval '1 second', attempts = attempts + 1, retry_at = null, updated_at = now()
where key = any($1::uuid[]) and status = 'sending' and lease_owner = $2
