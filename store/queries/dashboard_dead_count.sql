-- Dashboard: how many dead letters there are.
select count(*)::bigint from booking_events_dead
