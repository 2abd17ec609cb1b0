-- notifications.status gains 'unknown': a chat channel (Slack, Discord, Telegram;
-- they honour no Idempotency-Key) got the request and did not answer within its timeout. The
-- message may have been posted, so the notifier never re-sends it automatically; `booking-consumer
-- notifications --status unknown` lists them for a person to check.
alter table notifications drop constraint notifications_status_check;
alter table notifications add constraint notifications_status_check
    check (status in ('sending', 'sent', 'failed', 'unknown', 'skipped'));

-- retry_at: a claim waiting for its next attempt after a transient failure (the sender's backoff
-- or the channel's Retry-After) is not picked again before it; null when there is no wait.
alter table notifications add column retry_at timestamptz;
