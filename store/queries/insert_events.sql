-- InsertEvents: one set-based insert of a batch of events, one array parameter per column
-- (whatever the batch size, far from the 65,535 bind-parameter limit). A known event_id is skipped;
-- the row count is the number of new events. The listing_lifetimes projection of the new events'
-- listings is refreshed by booking_events' own trigger, inside this statement (migration 007).
--
-- The placeholders in double braces below are filled from store/eventrow.go's eventColumns, the one
-- definition of the row: the column list, the named array parameters (one per column) and the
-- unnested row with its casts. (Comments name no placeholder: the expansion would fill it too, and
-- a long comment pushes the statement past pg_stat_activity's 1 KB of query text.)
insert into booking_events ({{columns}})
select {{selects}}
from unnest({{arrays}}) as u({{columns}})
on conflict (event_id) do nothing
