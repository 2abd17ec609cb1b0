-- crawler notifications resend: the failed claims (and, with ?2, the unknown ones) of the
-- channels ?1 (a JSON array), of watch ?3 ('' any), claimed at or after ?4 (0 any), back to
-- sending, marked resend; their send key and part of parts are kept (?5 now).
update claims
set status = 'sending', resend = 1, retry_at = null, updated_at = ?5
where (status = 'failed' or (?2 and status = 'unknown'))
  and channel in (select value from json_each(?1))
  and (?3 = '' or watch = ?3)
  and claimed_at >= ?4
