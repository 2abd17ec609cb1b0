package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
)

// openDatabase opens the pool at dbURL, or at $DATABASE_URL when dbURL is empty, through
// cli.OpenDatabase: errors name user@host:port/database, never the URL or its password.
func openDatabase(ctx context.Context, env cli.Env, dbURL string) (*pgxpool.Pool, error) {
	if dbURL == "" {
		dbURL = strings.TrimSpace(env.Getenv("DATABASE_URL"))
	}
	if dbURL == "" {
		return nil, fmt.Errorf("%w: DATABASE_URL is not set (or pass --database-url)", cli.ErrUsage)
	}
	return cli.OpenDatabase(ctx, dbURL, 0)
}
