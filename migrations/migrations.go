// Package migrations holds the numbered, forward-only schema migrations of the booking database
// (NNN_name.sql, embedded) and applies them with jackc/tern under tern's advisory lock, recording
// the version in the schema_version table. Views are not migrations: see package views.
package migrations

import (
	"context"
	"embed"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/tern/v2/migrate"
)

// FS holds the migration files. Numbering must be 1..N without gaps or duplicates (tern refuses
// otherwise, and TestNumbering checks it).
//
//go:embed *.sql
var FS embed.FS

// VersionTable is tern's version table: one row holding the number of the last applied migration.
const VersionTable = "public.schema_version"

// Apply brings the database behind conn up to the newest migration. It is idempotent and safe to
// run from several processes at once: tern serialises them with pg_advisory_lock and each
// migration runs in its own transaction.
func Apply(ctx context.Context, conn *pgx.Conn) error {
	m, err := migrate.NewMigrator(ctx, conn, VersionTable)
	if err != nil {
		return fmt.Errorf("init migrator: %w", err)
	}
	if err := m.LoadMigrations(FS); err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	if err := m.Migrate(ctx); err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	return nil
}
