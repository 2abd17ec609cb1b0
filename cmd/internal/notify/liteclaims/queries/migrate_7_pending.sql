-- Migration 7: the confirm states of the crawler path (#51 item 3), defined once in
-- notify.Status: 'pending' (claimed, waiting for a crawl of its page set confirm_after later to
-- still show it; never picked) and 'withheld' (its listing closed first: never sent). SQLite
-- cannot change a check constraint in place, so the table is rebuilt with every row and seq (its
-- autoincrement counter follows the rename), and its indexes are made again; claims_pending
-- finds the pending claims a crawler loads at start-up.
create table claims_7 (
    seq         integer primary key autoincrement,
    key         text    not null unique,
    watch       text    not null,
    channel     text    not null,
    event_id    text    not null,
    crawl_id    text    not null,
    listing_key text    not null,
    occurred_at integer not null,
    event       text    not null,
    status      text    not null check (status in ('sending', 'sent', 'failed', 'unknown', 'skipped', 'pending', 'withheld')),
    reason      text,
    error       text,
    attempts    integer not null default 0,
    send_key    text,
    retry_at    integer,
    claimed_at  integer not null,
    sent_at     integer,
    updated_at  integer not null,
    send_part   integer,
    send_parts  integer,
    backlog     integer not null default 0,
    resend      integer not null default 0
);
insert into claims_7 (seq, key, watch, channel, event_id, crawl_id, listing_key, occurred_at, event, status, reason, error,
                      attempts, send_key, retry_at, claimed_at, sent_at, updated_at, send_part, send_parts, backlog, resend)
select seq, key, watch, channel, event_id, crawl_id, listing_key, occurred_at, event, status, reason, error,
       attempts, send_key, retry_at, claimed_at, sent_at, updated_at, send_part, send_parts, backlog, resend
from claims;
drop table claims;
alter table claims_7 rename to claims;
create index claims_sending on claims (channel, seq) where status = 'sending';
create index claims_status on claims (status, claimed_at);
create index claims_listing on claims (watch, channel, listing_key, occurred_at);
create index claims_pending on claims (seq) where status = 'pending';
