-- Refresh, part 1: forget the rows of the listings $1. A join on the keys, not "listing_key =
-- any($1)": that form may be planned as a sequential scan comparing every row with every key
-- (statistics lag behind a fast-growing table), 8x slower in BenchmarkIngestProjection.
delete from listing_lifetimes l using unnest($1::text[]) as k where l.listing_key = k
