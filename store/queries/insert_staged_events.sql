-- InsertStagedEvents: the batch COPYed into booking_events_staged (stage_events.sql) into
-- booking_events, as insert_events.sql does from its arrays: a known event_id is skipped, the row
-- count is the number of new events, the projection's trigger runs inside this statement. In
-- event_id order, as the store sorts every batch, so that concurrent batches sharing an event_id
-- wait for each other instead of deadlocking.
insert into booking_events ({{columns}})
select {{selects}}
from booking_events_staged as u
order by u.event_id
on conflict (event_id) do nothing
