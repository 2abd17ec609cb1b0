update chat_watches set muted = $2 where name = $1;
