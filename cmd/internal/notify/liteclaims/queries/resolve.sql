-- Resolve a pending claim (?1 key): ?2 its new status (sending, withheld or skipped), ?3 the
-- reason ('' none), ?4 now. A claim no longer pending is left as it is.
update claims set status = ?2, reason = nullif(?3, ''), updated_at = ?4
where key = ?1 and status = 'pending'
