insert into chat_watches (name, channel, spec, muted, made_by, created_at, spec_form)
values ('#new-' || gen_random_uuid(), $1, $2, $3, $4, $5, 2)
returning id;
