package liteclaims

import (
	"path/filepath"
	"testing"
)

// TestOpenSizesThePageCache: the connection's page cache is CacheKiB (SQLite's default of 2 MiB
// spilled a first crawl's claim transaction to the WAL before its commit); durability stays
// WAL with synchronous=FULL.
func TestOpenSizesThePageCache(t *testing.T) {
	t.Parallel()
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "alerts.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var cache, sync int
	var journal string
	if err := s.db.QueryRowContext(t.Context(), "pragma cache_size").Scan(&cache); err != nil {
		t.Fatal(err)
	}
	if err := s.db.QueryRowContext(t.Context(), "pragma synchronous").Scan(&sync); err != nil {
		t.Fatal(err)
	}
	if err := s.db.QueryRowContext(t.Context(), "pragma journal_mode").Scan(&journal); err != nil {
		t.Fatal(err)
	}
	if cache != -CacheKiB || sync != 2 || journal != "wal" {
		t.Fatalf("cache_size %d, synchronous %d, journal_mode %q; want %d (KiB), 2 (FULL), wal", cache, sync, journal, -CacheKiB)
	}
}
