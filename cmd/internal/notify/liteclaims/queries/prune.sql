-- Retention: delete sent and skipped claims claimed before ?1 (failed and unknown ones are kept).
delete from claims where status in ('sent', 'skipped') and claimed_at < ?1
