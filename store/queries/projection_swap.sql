-- Swap, part 1 (inside the rebuild's final transaction, after the catch-up): listing_lifetimes_next
-- becomes listing_lifetimes; the old table steps aside until the served views are re-pointed at
-- the new one (projection_swap_finish.sql), so booking_lifetimes itself is never dropped.
alter table if exists listing_lifetimes rename to listing_lifetimes_old;
alter table listing_lifetimes_next rename to listing_lifetimes;
