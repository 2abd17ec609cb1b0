package liteclaims_test

import (
	"path/filepath"
	"testing"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/claimstoretest"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/liteclaims"
)

func open(t *testing.T, path string) *liteclaims.Store {
	t.Helper()
	st, err := liteclaims.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestClaimStoreSuite runs the shared ClaimStore suite on SQLite; a restart closes the file and
// opens it again.
func TestClaimStoreSuite(t *testing.T) {
	t.Parallel()
	claimstoretest.Run(t, claimstoretest.Factory{
		New: func(t *testing.T) notify.ClaimStore { return open(t, filepath.Join(t.TempDir(), "alerts.db")) },
		Reopen: func(t *testing.T, old notify.ClaimStore) notify.ClaimStore {
			st := old.(*liteclaims.Store)
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			return open(t, st.Path())
		},
	})
}
