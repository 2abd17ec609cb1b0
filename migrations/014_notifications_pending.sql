-- notifications.status gains the confirm states of the crawler path (#51 item 3), defined once in
-- notify.Status for both claim stores: 'pending' (claimed, waiting for a later crawl of its page
-- set to still show the listing; never leased) and 'withheld' (its listing closed first: never
-- sent). booking-consumer notify does not confirm (it cannot observe "still open"), so it makes
-- neither; the table is the same for both stores' conformance suite.
alter table notifications drop constraint notifications_status_check;
alter table notifications add constraint notifications_status_check
    check (status in ('sending', 'sent', 'failed', 'unknown', 'skipped', 'pending', 'withheld'));

create index notifications_pending_idx on notifications (claimed_at) where status = 'pending';
