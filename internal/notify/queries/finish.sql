-- After the channel answered: sent, or failed with the error ($3 status, $4 error).
update notifications
set status = $3, error = nullif($4, ''), sent_at = case when $3 = 'sent' then now() end,
    lease_owner = null, lease_until = null, updated_at = now()
where key = any($1::uuid[]) and status = 'sending' and lease_owner = $2
