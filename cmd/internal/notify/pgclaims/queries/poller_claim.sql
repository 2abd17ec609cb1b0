insert into chat_pollers (bot, channel, host, pid, since) values ($1, $2, $3, $4, now())
on conflict (bot) do update set channel = excluded.channel, host = excluded.host, pid = excluded.pid, since = now();
