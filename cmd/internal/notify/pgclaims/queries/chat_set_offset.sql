insert into chat_offsets (bot, next_offset) values ($1, $2)
on conflict (bot) do update set next_offset = excluded.next_offset, updated_at = now();
