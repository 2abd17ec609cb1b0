select channel, host, pid, since from chat_pollers where bot = $1;
