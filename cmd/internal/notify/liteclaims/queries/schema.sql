-- The crawler's alert claims (liteclaims): one row per (watch, channel, event) match, as in
-- PostgreSQL's notifications table (migrations 005 and 006), without leases (one process: the
-- state-dir lock). Times are Unix nanoseconds. seq is the claim order.
create table if not exists claims (
    seq         integer primary key autoincrement,
    key         text    not null unique,
    watch       text    not null,
    channel     text    not null,
    event_id    text    not null,
    crawl_id    text    not null,
    listing_key text    not null,
    occurred_at integer not null,
    event       text    not null, -- the event's JSON
    status      text    not null check (status in ('sending', 'sent', 'failed', 'unknown', 'skipped')),
    reason      text,
    error       text,
    attempts    integer not null default 0,
    send_key    text,   -- the Idempotency-Key of its message, fixed by the first Pick
    retry_at    integer,
    claimed_at  integer not null,
    sent_at     integer,
    updated_at  integer not null
);
create index if not exists claims_sending on claims (channel, seq) where status = 'sending';
create index if not exists claims_status on claims (status, claimed_at);

-- The latest close of each listing seen in a claim batch (the "closed" rules).
create table if not exists closes (
    listing_key text    primary key,
    closed_at   integer not null
);
