package main

import (
	"context"
	"fmt"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/migrations"
	"github.com/golfcrawler/golf-crawler/views"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrateCmd is `booking-consumer migrate`: apply the migrations and the views, then exit.
func migrateCmd(ctx context.Context, env cli.Env, args []string) error {
	fs := newFlagSet(env, "migrate", "Apply the database migrations (tern, under an advisory lock) and re-install the views, then exit.")
	var dbURL string
	fs.StringVar(&dbURL, "database-url", "", "PostgreSQL URL (default $DATABASE_URL)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	pool, err := cli.OpenDatabase(ctx, cli.DatabaseURL(env.Getenv, dbURL), 0)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := migrate(ctx, pool); err != nil {
		return err
	}
	env.Logger.InfoContext(ctx, "migrations and views applied")
	return nil
}

// migrate applies the migrations, then the views, on one connection, then builds the
// listing_lifetimes projection if it is missing or was built from other view definitions.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	c, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire connection for migrations: %w", err)
	}
	err = migrations.Apply(ctx, c.Conn())
	if err == nil {
		err = views.Install(ctx, c.Conn())
	}
	c.Release()
	if err != nil {
		return err
	}
	return ensureProjection(ctx, pool)
}
