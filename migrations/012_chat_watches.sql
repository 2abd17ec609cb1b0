-- Watches from the chat, central path: the watches made with /watch in a command channel's chat
-- (commands: true), kept beside the watches file's and in force under the same rules; each
-- bot's getUpdates offset (the next update id to ask for), saved before a command is
-- handled so that a restart runs no command twice; and who polls each bot.
-- id is an identity so that a name (chat-<id>) is never given twice, even after a /remove: a new
-- watch under an old name would inherit its fingerprint and claims and miss its backlog.
create table chat_watches (
    id         bigint      generated always as identity primary key,
    name       text        not null unique,
    channel    text        not null,
    spec       text        not null, -- the /watch arguments, parsed again on load
    muted      boolean     not null default false,
    made_by    bigint      not null default 0, -- the Telegram user id
    created_at timestamptz not null default now()
);

-- chat_offsets: per bot (bot: pgclaims.BotKey, a hash of the token: update ids are a bot's, so a
-- channel given another token starts afresh instead of skipping the new bot's updates).
create table chat_offsets (
    bot         text        primary key,
    next_offset bigint      not null,
    updated_at  timestamptz not null default now()
);

-- chat_pollers: who holds the getUpdates poller of a bot (Telegram allows one per bot). The
-- holder also holds a session advisory lock keyed by the same hash, which dies with its
-- connection (a crashed holder); this row only names it for the next one refused. bot is a hash
-- of the token, never the token.
create table chat_pollers (
    bot     text        primary key,
    channel text        not null,
    host    text        not null,
    pid     integer     not null,
    since   timestamptz not null default now()
);
