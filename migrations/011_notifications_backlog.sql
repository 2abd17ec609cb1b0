-- A watch also matches what is already listed. backlog marks a notification of a listing that was already open
-- (in booking_lifetimes) when its watch asked (new, or its conditions changed): worded as already
-- open, never stale at claim time, its age at send time counted from its claim. resend marks one
-- put back to sending by `booking-consumer notifications resend`: exempt from the age check.
alter table notifications add column backlog boolean not null default false,
                          add column resend boolean not null default false;

-- A backlog claim is made only if its watch and channel has no notification of the listing's
-- current lifetime yet (any fingerprint, any status).
create index notifications_listing_idx on notifications (watch, channel, listing_key);

-- notification_fingerprints: per watch, the fingerprint of the conditions the notifier last
-- answered (notify.Watch.Fingerprint), recorded in the transaction of that backlog's claims; a
-- watch whose fingerprint differs (or has none) asks again at the notifier's start.
create table notification_fingerprints (
    watch       text        primary key,
    fingerprint text        not null,
    updated_at  timestamptz not null default now()
);
