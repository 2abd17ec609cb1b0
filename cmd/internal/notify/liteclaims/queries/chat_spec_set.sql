update chat_watches set spec = ?2 where id = ?1;
