-- Verify: every listing where the served booking_lifetimes (the listing_lifetimes projection) and
-- the definition (booking_lifetimes_from_events) disagree, or that only one of them has. One
-- statement, so one snapshot and one clock: a write commits its events and its projection rows
-- together, so a verify running beside the consumer compares like with like.
select coalesce(v.listing_key, p.listing_key), coalesce(v.play_date, p.play_date)::text,
       to_jsonb(v), to_jsonb(p)
from booking_lifetimes_from_events v
full join booking_lifetimes p on p.listing_key = v.listing_key and p.play_date = v.play_date
where row(v.*) is distinct from row(p.*)
order by 1, 2
