-- StageEvents: the session's staging table of a batch (the consumer's fast path: a binary COPY
-- into it, then insert_staged_events.sql), created on a connection's first batch. Temporary: no
-- WAL, no other session sees it; ON COMMIT DELETE ROWS empties it whenever a transaction that
-- wrote it ends. Its columns are booking_events' as the batch sends them (the parameter types of
-- store/eventrow.go's eventColumns: play_date and tee_time as text, payload as text, an event
-- field's int as bigint), so the insert casts exactly as insert_events.sql's unnest does.
create temporary table if not exists booking_events_staged ({{param_columns}}) on commit delete rows
