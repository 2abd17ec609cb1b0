-- Migration 5: the backlog claim's "already claimed for this lifetime" probe (claim_backlog.sql:
-- watch, channel, listing_key and occurred_at at or after the lifetime's start) answered from the
-- index alone: with occurred_at in it, one seek instead of a read of every earlier claim's row of
-- the listing.
drop index claims_listing;
create index claims_listing on claims (watch, channel, listing_key, occurred_at);
