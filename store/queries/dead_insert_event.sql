-- RetryDead, step 2: store one re-validated dead letter as an event, at the Kafka position it was
-- dead-lettered from. Idempotent like the consumer's insert: a known event_id is skipped, so
-- RowsAffected says whether it was new.
--
-- The column list and the values (named parameters, one per column, with their casts) are filled
-- from store/eventrow.go's eventColumns, the same definition insert_events.sql uses.
insert into booking_events ({{columns}})
values ({{values}})
on conflict (event_id) do nothing
