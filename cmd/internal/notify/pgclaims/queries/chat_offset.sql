select next_offset from chat_offsets where bot = $1;
