package main

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// healthcheckCmd GETs a URL and fails unless it answers 200: the Docker healthcheck of an image
// that has no shell and no curl (compose/app/compose.yaml).
func healthcheckCmd(ctx context.Context, env environment, args []string) error {
	fs := env.newFlagSet("healthcheck", "GET --url and exit 0 only on HTTP 200 (for container healthchecks).")
	url := fs.String("url", "http://127.0.0.1:9464/healthz", "URL to check")
	timeout := fs.Duration("timeout", 3*time.Second, "give up after this long")
	if err := parse(fs, args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *url, nil)
	if err != nil {
		return fmt.Errorf("%w: healthcheck: %v", errUsage, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck %s: %w", *url, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck %s: status %s", *url, resp.Status)
	}
	return nil
}
