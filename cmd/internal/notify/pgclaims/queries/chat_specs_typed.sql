-- The chat watches still stored as /watch's arguments as typed (spec_form 1, migration 013).
select id, spec from chat_watches where spec_form = 1 order by id;
