-- Resolve pending claims ($1 keys, $2 their new statuses: sending, withheld or skipped, $3 their
-- reasons, '' none): a claim confirmed to sending is leased to this process ($4 owner, $5 lease
-- in seconds), so that its sender picks it. A claim no longer pending is left as it is.
update notifications n
set status = r.status, reason = nullif(r.reason, ''), updated_at = now(),
    lease_owner = case when r.status = 'sending' then $4::text end,
    lease_until = case when r.status = 'sending' then now() + $5::float8 * interval '1 second' end
from unnest($1::uuid[], $2::text[], $3::text[]) as r(key, status, reason)
where n.key = r.key and n.status = 'pending'
