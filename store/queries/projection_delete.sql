-- Refresh, part 1: forget the rows of the listings $1.
delete from listing_lifetimes where listing_key = any($1::text[])
