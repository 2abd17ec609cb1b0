-- Record the fingerprint a watch was evaluated with on a source (?1 watch, ?2 source,
-- ?3 fingerprint, ?4 now).
insert into fingerprints (watch, source, fingerprint, updated_at) values (?1, ?2, ?3, ?4)
on conflict (watch, source) do update set fingerprint = excluded.fingerprint, updated_at = excluded.updated_at
