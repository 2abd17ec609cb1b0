-- Lease rows to this sender ($1 keys, $2 their send keys, $5 and $6 their messages' part of parts,
-- $3 owner, $4 lease seconds); a send key once set is kept, with its part of parts.
update notifications n
set lease_owner = $3, lease_until = now() + $4::float8 * interval '1 second',
    send_part = case when n.send_key is null then x.send_part else n.send_part end,
    send_parts = case when n.send_key is null then x.send_parts else n.send_parts end,
    send_key = coalesce(n.send_key, x.send_key), updated_at = now()
from unnest($1::uuid[], $2::uuid[], $5::smallint[], $6::smallint[]) as x(key, send_key, send_part, send_parts)
where n.key = x.key and n.status = 'sending'
