package clitest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// Run is a command's run, as cli.Main calls it.
type Run func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error

// CheckLogEnv checks that each of subs reads LOG_LEVEL and LOG_FORMAT before anything runs:
// `command SUB --help` with LOG_LEVEL=loud or LOG_FORMAT=xml must be a usage error naming the
// variable. errUsage is cli.ErrUsage (clitest cannot import cli: cli's tests import clitest).
func CheckLogEnv(t *testing.T, command string, run Run, errUsage error, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		for _, kv := range [][2]string{{"LOG_LEVEL", "loud"}, {"LOG_FORMAT", "xml"}} {
			getenv := func(k string) string {
				if k == kv[0] {
					return kv[1]
				}
				return ""
			}
			err := run(t.Context(), []string{sub, "--help"}, getenv, &bytes.Buffer{}, &bytes.Buffer{})
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), kv[0]) {
				t.Errorf("%s %s with %s=%s: err = %v, want a usage error naming %s", command, sub, kv[0], kv[1], err, kv[0])
			}
		}
	}
}
