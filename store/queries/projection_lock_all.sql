-- Every refresh takes this lock shared; a rebuild takes it exclusive to register and to swap, so
-- that no refresh is between its writes and its commit at those two moments.
select pg_advisory_xact_lock_shared(1319, 0)
