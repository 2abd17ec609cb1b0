-- DeadLetters: booking_events_dead rows matching the filters (dead_matching.sql), newest failure
-- first; a null limit means all.
{{matching}}
order by last_failed_at desc, id desc
limit $4
