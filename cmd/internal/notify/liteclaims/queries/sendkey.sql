-- Fix a claim's send key the first time its group is picked (?1 key, ?2 send key).
update claims set send_key = ?2 where key = ?1 and send_key is null
