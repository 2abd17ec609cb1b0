-- The chat's watches are stored in their canonical form (notify.CanonicalSpec, what the /watch
-- answer prints) instead of /watch's arguments as typed, so that a change of /watch's grammar
-- (review 4: a bare number below 10,000 is no price any more) does not change what a stored watch
-- means. spec_form says which a row holds: 1, the arguments as typed (every row written before
-- this migration, and any a notifier of before writes during an upgrade: the default); 2, the
-- canonical form (what notifiers from this one on write). The rewrite is Go, not SQL: the store
-- rewrites each row of form 1 in the canonical form with the meaning it had (pgclaims.ChatWatches,
-- notify.UpgradeChatSpec) before the watches are read.
alter table chat_watches add column spec_form smallint not null default 1
    constraint chat_watches_spec_form check (spec_form in (1, 2));
