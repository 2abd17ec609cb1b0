-- Migration 3: resend marks a claim put back to sending by `crawler notifications resend`: a
-- person asked for it, so the sender's event-age check does not apply to it.
alter table claims add column resend integer not null default 0;
