package notifylist

import (
	"fmt"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
)

// LoadWatches loads the watches file for a command that sends (a crawl, resend, alerts test): its
// channels' secrets are scrubbed from env's output and logger from then on, and returned.
func LoadWatches(env *cli.Env, path string) (*notify.Config, []string, error) {
	w, err := notify.LoadFile(path, env.Getenv)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", cli.ErrUsage, err)
	}
	secrets := w.Secrets()
	env.Stderr, env.Stdout = cli.ScrubWriter(env.Stderr, secrets), cli.ScrubWriter(env.Stdout, secrets)
	if env.Logger, err = cli.NewLogger(env.Getenv, env.Stderr); err != nil {
		return nil, nil, err
	}
	return w, secrets, nil
}
