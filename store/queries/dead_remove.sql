-- RetryDead, step 3a: a dead letter whose event is now stored leaves the table (same transaction).
delete from booking_events_dead where id = $1
