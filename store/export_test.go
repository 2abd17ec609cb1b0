package store

// WithoutProjection returns a Store whose Ingest does not maintain listing_lifetimes: the
// benchmarks' baseline.
func WithoutProjection(s *Store) *Store { return &Store{pool: s.pool, noProjection: true} }

// WithoutProjectionLocks returns a Store whose Ingest refreshes listing_lifetimes without the
// per-listing locks: what the concurrency test shows to be wrong.
func WithoutProjectionLocks(s *Store) *Store { return &Store{pool: s.pool, noProjectionLocks: true} }
