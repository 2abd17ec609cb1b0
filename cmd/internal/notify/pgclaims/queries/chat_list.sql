select name, channel, spec, muted, made_by, created_at from chat_watches order by id;
