-- Migration 6: the chat's watches are stored in their canonical form (notify.CanonicalSpec, what
-- the /watch answer prints) instead of /watch's arguments as typed, so that a change of /watch's
-- grammar (review 4: a bare number below 10,000 is no price any more) does not change what a
-- stored watch means. The rewrite of the rows is Go (liteclaims.upgradeChatSpecs), in this
-- migration's transaction; nothing changes in the table's shape.
select 1;
