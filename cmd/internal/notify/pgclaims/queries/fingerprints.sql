-- Record the fingerprints the watches were answered with ($1 watches, $2 fingerprints).
insert into notification_fingerprints (watch, fingerprint)
select * from unnest($1::text[], $2::text[])
on conflict (watch) do update set fingerprint = excluded.fingerprint, updated_at = now()
