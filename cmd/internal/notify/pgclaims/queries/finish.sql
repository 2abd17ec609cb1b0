-- A final outcome: sent, failed or unknown with the error, skipped with the reason ($3 status,
-- $4 error, $5 reason).
update notifications
set status = $3, error = nullif($4, ''), reason = coalesce(nullif($5, ''), reason), retry_at = null, sent_at = case when $3 = 'sent' then now() end,
    lease_owner = null, lease_until = null, updated_at = now()
where key = any($1::uuid[]) and status = 'sending' and lease_owner = $2
