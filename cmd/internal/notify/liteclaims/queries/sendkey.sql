-- Fix the send key of a group's claims and its message's part of parts the first time the group is
-- picked (?1 the claim keys as a JSON array, ?2 send key, ?3 part, ?4 parts): one statement per
-- message, not per claim.
update claims set send_key = ?2, send_part = ?3, send_parts = ?4
where key in (select value from json_each(?1)) and send_key is null
