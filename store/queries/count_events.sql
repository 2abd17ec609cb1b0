-- CountEvents
select count(*) from booking_events
