package main

import (
	"context"
	"strings"
	"testing"
)

// An error that is not the cancellation itself is reported even when SIGTERM arrived meanwhile:
// exit status 0 means "stopped cleanly", never "failed while stopping" (such an error
// was once swallowed on SIGTERM).
func TestRunReportsAnErrorThatRacesSIGTERM(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // SIGTERM already arrived
	env := map[string]string{"DATABASE_URL": "postgres://golf@127.0.0.1:notaport/golf", "KAFKA_BOOTSTRAP": "127.0.0.1:1",
		"METRICS_ADDR": ""}
	_, _, err := runCLI(t, ctx, env, "run")
	if err == nil || !strings.Contains(err.Error(), "database URL") {
		t.Fatalf("run with an unparsable DATABASE_URL during shutdown = %v; want the parse error, not a clean stop", err)
	}
}
