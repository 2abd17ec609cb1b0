-- Lease rows to this sender ($1 keys, $2 their send keys, $3 owner, $4 lease seconds); a send key
-- once set is kept.
update notifications n
set lease_owner = $3, lease_until = now() + $4::float8 * interval '1 second',
    send_key = coalesce(n.send_key, x.send_key), updated_at = now()
from unnest($1::uuid[], $2::uuid[]) as x(key, send_key)
where n.key = x.key and n.status = 'sending'
