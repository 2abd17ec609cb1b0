-- The claims waiting for their confirmation (pending), oldest first.
select key, watch, channel, event from notifications where status = 'pending' order by claimed_at, key
