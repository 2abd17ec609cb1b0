-- Migration 4: watches made in a command channel's chat (/watch), kept beside the watches file's,
-- and each command channel's getUpdates offset (the next update id to ask for), so that a
-- restart runs no command twice.
create table chat_watches (
    name       text primary key,
    channel    text not null,
    spec       text not null, -- the /watch arguments, parsed again on load
    muted      integer not null default 0,
    made_by    integer not null default 0,
    created_at integer not null
);
create table chat_offsets (
    channel     text primary key,
    next_offset integer not null
);
