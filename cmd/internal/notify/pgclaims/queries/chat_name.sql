update chat_watches set name = $2 where id = $1;
