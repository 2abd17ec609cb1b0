-- Migration 4: watches made in a command channel's chat (/watch), kept beside the watches file's,
-- and each command channel's getUpdates offset (the next update id to ask for), so that a
-- restart runs no command twice.
-- id is autoincrement so that a name (chat-<id>) is never given twice, even after a /remove: a new
-- watch under an old name would inherit its fingerprints and claims and miss its backlog.
create table chat_watches (
    id         integer primary key autoincrement,
    name       text not null unique,
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
