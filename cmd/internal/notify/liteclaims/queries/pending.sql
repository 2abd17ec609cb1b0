-- The claims waiting for their confirmation (pending), in claim order.
select key, watch, channel, event from claims where status = 'pending' order by seq
