-- Fix a claim's send key and its message's part of parts the first time its group is picked (?1 key,
-- ?2 send key, ?3 part, ?4 parts).
update claims set send_key = ?2, send_part = ?3, send_parts = ?4 where key = ?1 and send_key is null
