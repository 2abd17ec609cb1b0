-- Retention: delete sent, skipped and withheld claims claimed before ?1 (failed and unknown ones
-- are kept).
delete from claims where status in ('sent', 'skipped', 'withheld') and claimed_at < ?1
