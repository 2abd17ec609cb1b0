-- One transaction-scoped lock per listing, ($1) sorted and distinct, taken in array order so two
-- refreshes touching the same listings wait for each other instead of deadlocking. The key space
-- 1320 is the projection's own; (1319, *) are the rebuild's.
select count(pg_advisory_xact_lock(1320, k)) from unnest($1::int[]) as k
