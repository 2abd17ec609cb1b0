-- ExistingIDs: how many of the given ids are stored (replay dry-run).
select count(*) from booking_events where event_id = any($1::uuid[])
