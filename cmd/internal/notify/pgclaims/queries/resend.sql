-- booking-consumer notifications resend: the failed notifications ($1 statuses: failed, and
-- unknown when asked) of channels $2, of watch $3 ('' any), claimed at or after $4 (null any), back
-- to sending, marked resend and leased to this process ($5 owner, $6 lease seconds); send_key
-- and its part of parts are kept, so each message goes out again under the key it failed with.
update notifications
set status = 'sending', resend = true, retry_at = null, lease_owner = $5,
    lease_until = now() + $6::float8 * interval '1 second', updated_at = now()
where status = any($1::text[]) and channel = any($2::text[]) and ($3 = '' or watch = $3)
  and ($4::timestamptz is null or claimed_at >= $4)
