delete from chat_watches where name = $1;
