package main

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
)

// TestRemovedPublisherSettings: the in-memory publisher's settings are gone with it. Its
// variables (KAFKA_PUBLISH_RETRY_WINDOW, KAFKA_PUBLISH_QUEUE_SIZE) are ignored, even a value that
// does not parse, and named in a warning; its flags (--retry-window, --queue-size) are a usage
// error that says why they are gone.
func TestRemovedPublisherSettings(t *testing.T) {
	t.Parallel()
	srv := teePage(t, func() []teeRow { return []teeRow{{"12/20", "07:00", 150000}} })
	sites := teeSitesFile(t, srv.URL)
	vars := map[string]string{"KAFKA_BOOTSTRAP": "", "LOG_FORMAT": "text",
		"KAFKA_PUBLISH_RETRY_WINDOW": "soon", "KAFKA_PUBLISH_QUEUE_SIZE": "50"}
	var out, errOut bytes.Buffer
	if err := run(t.Context(), []string{"once", "--sites", sites, "--state-dir", filepath.Join(t.TempDir(), "state")}, env(vars), &out, &errOut); err != nil {
		t.Fatalf("once with the old publisher's variables set: %v\n%s", err, errOut.String())
	}
	for _, name := range []string{"KAFKA_PUBLISH_RETRY_WINDOW", "KAFKA_PUBLISH_QUEUE_SIZE"} {
		if !strings.Contains(errOut.String(), name+" is ignored") {
			t.Errorf("no warning naming %s:\n%s", name, errOut.String())
		}
	}
	for _, flag := range []string{"--retry-window=5m", "--queue-size=10"} {
		err := run(t.Context(), []string{"once", "--sites", sites, flag}, env(vars), &out, &errOut)
		name := strings.SplitN(flag, "=", 2)[0]
		if !errors.Is(err, cli.ErrUsage) || !strings.Contains(err.Error(), name+" is gone") {
			t.Errorf("once %s: %v; want a usage error saying %s is gone", flag, err, name)
		}
	}
}
