package notifylist

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
)

// TestUsage is the help of both commands' `alerts test`.
const TestUsage = "Send one test message on a channel of the watches file and print the channel's answer: the\n" +
	"HTTP status and the start of its body (a wrong Telegram chat_id answers 400 \"chat not found\").\n" +
	"No claim is made, nothing is retried; the channel's URL and token are never printed. Exit\n" +
	"status 1 when the channel did not accept it."

// TestChannel sends the test message (notify.Channel.TestMessage) on channel name of cfg and prints its answer to w.
func TestChannel(ctx context.Context, w io.Writer, cfg *notify.Config, name string) error {
	ch := cfg.Channels[name]
	if ch == nil {
		names := make([]string, 0, len(cfg.Channels))
		for n := range cfg.Channels {
			names = append(names, n)
		}
		slices.Sort(names)
		return fmt.Errorf("%w: alerts test: no channel %q in the watches file (channels: %s)", cli.ErrUsage, name, strings.Join(names, ", "))
	}
	ans, err := ch.Exchange(ctx, notify.NewClient(nil), ch.TestMessage(time.Now()))
	if ans.Status != 0 {
		fmt.Fprintf(w, "channel %s (%s): HTTP %d %s\n", ch.Name, ch.Type, ans.Status, http.StatusText(ans.Status))
		if body := strings.Join(strings.Fields(ans.Body), " "); body != "" {
			fmt.Fprintf(w, "body: %s\n", body)
		}
	}
	if err != nil {
		return fmt.Errorf("alerts test: %w", err)
	}
	fmt.Fprintf(w, "channel %s accepted the test message\n", ch.Name)
	return nil
}

// AlertsCmd is both commands' `alerts test --channel NAME [--watches FILE]`; newFlagSet makes the
// command's flag set (its usage and environment help).
func AlertsCmd(ctx context.Context, env cli.Env, args []string, newFlagSet func(name, usage string) *flag.FlagSet) error {
	if len(args) == 0 || args[0] != "test" {
		return fmt.Errorf("%w: alerts: the one subcommand is `alerts test --channel NAME` (alerts test --help)", cli.ErrUsage)
	}
	fs := newFlagSet("alerts test", TestUsage)
	watches := fs.String("watches", env.Getenv("WATCHES_FILE"), "watches YAML `file` with the channels [WATCHES_FILE]")
	channel := fs.String("channel", "", "the `name` of the channel to test (required)")
	if err := cli.Parse(fs, args[1:]); err != nil {
		return err
	}
	if *watches == "" || *channel == "" {
		return fmt.Errorf("%w: alerts test: --channel and --watches (WATCHES_FILE) are required", cli.ErrUsage)
	}
	cfg, secrets, err := LoadWatches(&env, *watches)
	if err != nil {
		return err
	}
	return cli.ScrubError(TestChannel(ctx, env.Stdout, cfg, *channel), secrets)
}
