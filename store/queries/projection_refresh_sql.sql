-- The column lists of projection_upsert.sql for the table just swapped in: every column but the
-- key, and the same as excluded.*, in table order.
select string_agg(quote_ident(attname), ', ' order by attnum),
       string_agg('excluded.' || quote_ident(attname), ', ' order by attnum)
from pg_attribute
where attrelid = 'listing_lifetimes'::regclass and attnum > 0 and not attisdropped
  and attname not in ('listing_key', 'play_date')
