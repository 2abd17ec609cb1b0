// Package liteclaims is the alert engine's embedded claim store: SQLite (modernc.org/sqlite, pure
// Go) in one file of the crawler's state dir. One process uses it (the state-dir lock), so there
// are no leases: at start-up every claim still sending is picked again, with its send key. Its
// SQL is in queries/.
//
// Durability: WAL journal, synchronous=FULL (every commit, the claim transaction above all, is on
// disk when Claim returns; temp_store=MEMORY keeps a multi-row claim statement's statement journal
// out of a temp file, which nothing needs to survive), a busy timeout, and one connection, so that claims from sites crawled
// in parallel serialise on one writer. Its page cache is 16 MiB (CacheKiB; SQLite's default is
// 2 MiB): a site's first crawl claims a few hundred backlog rows into five B-trees in one
// transaction, which overflowed the default cache, so SQLite spilled dirty pages to the WAL in
// mid-transaction and read pages back (BenchmarkCrawlAlertsHook: about a tenth of the hook's CPU).
// What is synced and when is unchanged. A file that is not a readable SQLite database (truncated,
// a bad header, failing quick_check) fails Open with an error naming it: a silent fresh start
// would alert every open listing again. A file with a WAL is judged by SQLite alone (a full disk
// leaves the file short and its pages in the WAL); a transaction that fails on a full disk fails
// as "disk full", never as corruption.
package liteclaims

import (
	"bytes"
	"context"
	"database/sql"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
)

var (
	//go:embed queries/schema.sql
	schemaSQL string
	// migrations are the changes to schema.sql's tables, in order: migration i+1 is migrations[i],
	// applied once, in the transaction that sets pragma user_version to i+1 (6 rewrites the chat's
	// watches, in Go: upgradeChatSpecs).
	//go:embed queries/migrate_1_send_part.sql
	migrate1 string
	//go:embed queries/migrate_2_backlog.sql
	migrate2 string
	//go:embed queries/migrate_3_resend.sql
	migrate3 string
	//go:embed queries/migrate_4_chat.sql
	migrate4 string
	//go:embed queries/migrate_5_listing_index.sql
	migrate5 string
	//go:embed queries/migrate_6_chat_specs.sql
	migrate6 string
	//go:embed queries/migrate_7_pending.sql
	migrate7   string
	migrations = []migration{{sql: migrate1}, {sql: migrate2}, {sql: migrate3}, {sql: migrate4}, {sql: migrate5},
		{sql: migrate6, fn: upgradeChatSpecs}, {sql: migrate7}}
)

// migration is one change of the schema: its SQL, then (fn, when set) what Go does in the same
// transaction.
type migration struct {
	sql string
	fn  func(ctx context.Context, tx *sql.Tx) error
}

// BusyTimeout is how long a statement waits for the database's lock.
const BusyTimeout = 10 * time.Second

// ErrCorrupt is wrapped by Open's error for a file that is not a usable SQLite database.
var ErrCorrupt = errors.New("not a usable alerts database (truncated or corrupt; move it away to start afresh, which re-alerts open listings)")

// Store is a notify.ClaimStore in one SQLite file.
type Store struct {
	db   *sql.DB
	path string
	now  func() time.Time

	stmtMu sync.Mutex
	stmts  map[claimShape]*sql.Stmt // the claim statements prepared (claimStmt)
}

var _ notify.ClaimStore = (*Store)(nil)

// CacheKiB is the connection's page cache (SQLite's cache_size, in KiB): room for a first crawl's
// claim transaction without spilling (see the package doc). SQLite fills it only as pages are used.
const CacheKiB = 16 << 10

// Open opens (or creates) the alerts database at path.
func Open(ctx context.Context, path string) (*Store, error) {
	if err := checkFile(path); err != nil {
		return nil, err
	}
	dsn := "file:" + path + "?_txlock=immediate&_pragma=busy_timeout(" + fmt.Sprint(BusyTimeout.Milliseconds()) +
		")&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=temp_store(MEMORY)&_pragma=cache_size(-" + fmt.Sprint(CacheKiB) + ")"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("alerts database %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	s := &Store{db: db, path: path, now: time.Now}
	if err := s.init(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) init(ctx context.Context) error {
	var check string
	if err := s.db.QueryRowContext(ctx, "pragma quick_check").Scan(&check); err != nil {
		return fmt.Errorf("alerts database %s: %w: %w", s.path, ErrCorrupt, err)
	}
	if check != "ok" {
		return fmt.Errorf("alerts database %s: %w: quick_check: %s", s.path, ErrCorrupt, check)
	}
	if _, err := s.db.ExecContext(ctx, schemaSQL); err != nil {
		return s.failed("create tables", err)
	}
	return s.migrate(ctx)
}

// migrate applies the migrations the file has not had (pragma user_version counts them), each in
// one transaction with its new version. A file from a newer crawler (a higher version) is refused.
func (s *Store) migrate(ctx context.Context) error {
	var version int
	if err := s.db.QueryRowContext(ctx, "pragma user_version").Scan(&version); err != nil {
		return s.failed("schema version", err)
	}
	if version > len(migrations) {
		return fmt.Errorf("alerts database %s: schema version %d is newer than this crawler's %d (written by a newer crawler)",
			s.path, version, len(migrations))
	}
	for v := version; v < len(migrations); v++ {
		err := s.tx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, migrations[v].sql); err != nil {
				return err
			}
			if fn := migrations[v].fn; fn != nil {
				if err := fn(ctx, tx); err != nil {
					return err
				}
			}
			_, err := tx.ExecContext(ctx, fmt.Sprintf("pragma user_version = %d", v+1))
			return err
		})
		if err != nil {
			return s.failed(fmt.Sprintf("migration %d", v+1), err)
		}
	}
	return nil
}

// sqliteMagic is the first 16 bytes of every SQLite 3 database file.
var sqliteMagic = []byte("SQLite format 3\x00")

// checkFile refuses an existing file that cannot be a whole SQLite database: shorter than its
// header, a wrong magic, a size that is no multiple of its page size or below the page count its
// header records. A missing file is fine (created); an empty one is not (truncated). With a WAL
// beside it the file alone proves nothing: a checkpoint cut short by a full disk writes page 1
// (the new page count) and not the growth, and SQLite reads the missing pages from the WAL, so
// SQLite itself judges (Open's quick_check, which reads the WAL).
func checkFile(path string) error {
	if wal, err := os.Stat(path + "-wal"); err == nil && wal.Size() > 0 {
		return nil
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("alerts database %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("alerts database %s: %w", path, err)
	}
	hdr := make([]byte, 100)
	if _, err := io.ReadFull(f, hdr); err != nil {
		return fmt.Errorf("alerts database %s: %w: %d bytes, shorter than the 100-byte header", path, ErrCorrupt, st.Size())
	}
	if !bytes.Equal(hdr[:16], sqliteMagic) {
		return fmt.Errorf("alerts database %s: %w: bad header (not SQLite format 3)", path, ErrCorrupt)
	}
	pageSize := int64(binary.BigEndian.Uint16(hdr[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	if pageSize < 512 || pageSize&(pageSize-1) != 0 {
		return fmt.Errorf("alerts database %s: %w: bad page size %d", path, ErrCorrupt, pageSize)
	}
	pages := int64(binary.BigEndian.Uint32(hdr[28:32]))
	valid := bytes.Equal(hdr[24:28], hdr[92:96]) // the page count is valid for this change counter
	if st.Size()%pageSize != 0 || valid && st.Size() < pages*pageSize {
		return fmt.Errorf("alerts database %s: %w: %d bytes for %d pages of %d", path, ErrCorrupt, st.Size(), pages, pageSize)
	}
	return nil
}

// Close closes the database (and the statements prepared on it).
func (s *Store) Close() error {
	s.stmtMu.Lock()
	for _, st := range s.stmts {
		st.Close()
	}
	s.stmts = nil
	s.stmtMu.Unlock()
	return s.db.Close()
}

// Path is the database file.
func (s *Store) Path() string { return s.path }
