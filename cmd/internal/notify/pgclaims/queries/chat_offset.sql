select next_offset from chat_offsets where channel = $1;
