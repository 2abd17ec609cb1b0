-- Rebuild catch-up: forget the rows of the listings $1 in listing_lifetimes_next. A join on the
-- keys, not "listing_key = any($1)": that form may be planned as a sequential scan comparing
-- every row with every key.
delete from listing_lifetimes_next l using unnest($1::text[]) as k where l.listing_key = k
