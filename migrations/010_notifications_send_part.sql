-- send_part, send_parts: the place of a notification's message among the messages its watch,
-- channel and crawl were split in (a chat channel's limit on a message's length: Discord 2,000
-- characters, Telegram 4,096, Slack 4,000), fixed with send_key by the first sender that leased
-- it, so that a retry after a crash sends the same numbered message ("(2/3)") under the same key.
-- Null: not yet leased, or leased before this migration (not numbered).
alter table notifications add column send_part smallint, add column send_parts smallint;
