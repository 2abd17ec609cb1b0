-- RetryDead, step 3b: a dead letter still invalid stays, with today's reason and one more attempt.
update booking_events_dead
set error = $2, attempts = attempts + 1, last_failed_at = now()
where id = $1
