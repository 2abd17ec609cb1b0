-- notifications holds one row per (watch, channel, event) that the notifier matched:
-- the claim that makes alerts exactly once in effect. The notifier inserts it with ON CONFLICT
-- (watch, channel, event_id) DO NOTHING RETURNING in the batch's transaction, before the offsets
-- are committed, so a redelivered or replayed event claims nothing.
--
--   status   sending  claimed; a sender holds it while lease_until is in the future, anyone may
--                     take it once the lease expired (the holder died mid-send)
--            sent     the channel answered 2xx (sent_at)
--            failed   a permanent answer (4xx) or max attempts of transient ones (error)
--            skipped  never sent (reason: stale = older than --max-age at claim time; closed = a
--                     later close of the listing was already stored)
--   key      the stable claim key, uuid v5 over (watch, channel, event_id); a message of one
--            notification carries it as Idempotency-Key
--   send_key the Idempotency-Key of the message the row went out in (one message per watch,
--            channel and crawl), fixed by the first sender that leased it so a retry after a
--            crash repeats the same key
create table notifications (
    key         uuid        primary key,
    watch       text        not null,
    channel     text        not null,
    event_id    uuid        not null,
    crawl_id    text        not null,
    listing_key text        collate "C" not null,
    occurred_at timestamptz not null,
    event       jsonb       not null,
    status      text        not null check (status in ('sending', 'sent', 'failed', 'skipped')),
    reason      text,
    error       text,
    attempts    int         not null default 0,
    lease_owner text,
    lease_until timestamptz,
    send_key    uuid,
    claimed_at  timestamptz not null default now(),
    sent_at     timestamptz,
    updated_at  timestamptz not null default now(),
    constraint notifications_watch_channel_event unique (watch, channel, event_id)
);

create index notifications_sending_idx on notifications (channel, lease_until) where status = 'sending';
create index notifications_status_idx on notifications (status, claimed_at);

-- notification_closes: the latest close of each listing the notifier has seen, so that the
-- "later close already stored" rule works without the booking consumer (booking_events) too.
create table notification_closes (
    listing_key text        collate "C" primary key,
    closed_at   timestamptz not null
);
