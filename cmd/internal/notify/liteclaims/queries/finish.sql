-- A final outcome (?1 keys as a JSON array, ?2 status, ?3 error, ?4 reason, ?5 now).
update claims
set status = ?2, error = nullif(?3, ''), reason = coalesce(nullif(?4, ''), reason), retry_at = null,
    sent_at = case when ?2 = 'sent' then ?5 end, updated_at = ?5
where key in (select value from json_each(?1)) and status = 'sending'
