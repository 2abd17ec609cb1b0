insert into chat_offsets (channel, next_offset) values ($1, $2)
on conflict (channel) do update set next_offset = excluded.next_offset, updated_at = now();
