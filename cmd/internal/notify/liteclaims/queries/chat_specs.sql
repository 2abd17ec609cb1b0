select id, spec from chat_watches order by id;
