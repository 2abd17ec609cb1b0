package main

import (
	"context"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
)

// healthcheckCmd GETs a URL and fails unless it answers 200: the Docker healthcheck of an image
// that has no shell and no curl (compose/app/compose.yaml).
func healthcheckCmd(ctx context.Context, env cli.Env, args []string) error {
	fs := newFlagSet(env, "healthcheck", "GET --url and exit 0 only on HTTP 200 (for container healthchecks).")
	url := fs.String("url", "http://127.0.0.1:9464/healthz", "URL to check")
	timeout := fs.Duration("timeout", 3*time.Second, "give up after this long")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	return cli.Healthcheck(ctx, *url, *timeout)
}
