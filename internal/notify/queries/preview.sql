-- --dry-run: what claim.sql would do, without writing. Same parameters as claim.sql ($10, $11
-- unused); status 'claimed' for a match that already has a row.
select m.key, m.channel,
       case when n.key is not null then 'claimed'
            when s.reason is null then 'sending' else 'skipped' end,
       coalesce(s.reason, '')
from unnest($1::uuid[], $2::text[], $3::text[], $4::uuid[], $5::text[], $6::text[], $7::timestamptz[], $8::jsonb[])
         as m(key, watch, channel, event_id, crawl_id, listing_key, occurred_at, event)
cross join lateral (
    select case
        when m.occurred_at < now() - $9::float8 * interval '1 second' then 'stale'
        when exists (select 1 from booking_events b
                     where b.listing_key = m.listing_key collate "C" and b.event_type = 'listing_closed'
                       and b.occurred_at > m.occurred_at)
          or exists (select 1 from notification_closes c
                     where c.listing_key = m.listing_key collate "C" and c.closed_at > m.occurred_at) then 'closed'
    end as reason
) s
left join notifications n on n.key = m.key
where $10::text is not null or $11::float8 is not null
