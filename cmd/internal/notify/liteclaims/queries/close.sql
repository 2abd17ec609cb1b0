-- Remember a listing's close, keeping the latest (?1 listing key, ?2 closed at).
insert into closes (listing_key, closed_at) values (?1, ?2)
on conflict (listing_key) do update set closed_at = max(closed_at, excluded.closed_at)
