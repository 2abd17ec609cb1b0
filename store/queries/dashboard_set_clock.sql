-- Dashboard: the clock of the booking_lifetimes views (views/lifetimes_clock.sql reads golf.now,
-- else now()) for the rest of the read-only transaction ($1: an RFC 3339 time, serve --as-of).
select set_config('golf.now', $1, true)
