-- Remember the latest close of each listing the notifier has seen ($1 listing keys, $2 times; one
-- element per listing).
insert into notification_closes (listing_key, closed_at)
select * from unnest($1::text[], $2::timestamptz[])
on conflict (listing_key) do update set closed_at = greatest(notification_closes.closed_at, excluded.closed_at)
