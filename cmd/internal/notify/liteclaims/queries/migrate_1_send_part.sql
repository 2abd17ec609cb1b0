-- Migration 1: the part of parts of a claim's message (Channel.Split), fixed with send_key by the
-- first Pick so that a group split in numbered messages is split the same way after a restart.
-- Null: not yet picked, or picked before this migration (not numbered).
alter table claims add column send_part integer;
alter table claims add column send_parts integer;
