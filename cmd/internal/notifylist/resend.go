package notifylist

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/alerts"
	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
)

// ResendUsage is the help of both commands' `notifications resend`.
const ResendUsage = "Send the failed alerts again, now: each message under the Idempotency-Key it failed with\n" +
	"(a webhook that honours it drops a copy), exempt from the event-age check (--alert-max-age,\n" +
	"--max-age), still skipped when its listing closed after the event, its watch is no longer in\n" +
	"the watches file (watch_removed) or is muted (watch_muted). Unknown alerts (a chat channel timed\n" +
	"out after the request left: maybe delivered) are re-sent only with --include-unknown. Prints one\n" +
	"line per message with its outcome; exit status 1 when one failed again."

// ResendFlags are the flags of both commands' `notifications resend`.
type ResendFlags struct {
	status, watch, since string
	includeUnknown       bool
}

// Define defines the flags on fs.
func (r *ResendFlags) Define(fs *flag.FlagSet) {
	fs.StringVar(&r.status, "status", "", "the `status` to resend: failed (required)")
	fs.StringVar(&r.watch, "watch", "", "only this `watch`")
	fs.StringVar(&r.since, "since", "", "only alerts claimed at or after this `time`: RFC 3339 (2026-12-01T09:00:00+09:00) or a duration back from now (24h)")
	fs.BoolVar(&r.includeUnknown, "include-unknown", false, "also the unknown ones (maybe delivered: a chat channel may show them twice)")
}

// Filter is the claims the flags select, at now.
func (r *ResendFlags) Filter(now time.Time) (notify.ResendFilter, error) {
	f := notify.ResendFilter{Watch: r.watch, IncludeUnknown: r.includeUnknown}
	if r.status != string(notify.StatusFailed) {
		return f, fmt.Errorf("%w: notifications resend: --status %q: only failed alerts are resent (--status failed; "+
			"add --include-unknown for the unknown ones)", cli.ErrUsage, r.status)
	}
	if r.since != "" {
		if t, err := time.Parse(time.RFC3339, r.since); err == nil {
			f.Since = t
		} else if d, derr := time.ParseDuration(r.since); derr == nil && d > 0 {
			f.Since = now.Add(-d)
		} else {
			return f, fmt.Errorf("%w: notifications resend: --since %q: want an RFC 3339 time (2026-12-01T09:00:00+09:00) or a positive duration (24h)",
				cli.ErrUsage, r.since)
		}
	}
	return f, nil
}

// WriteResent prints a resend's outcomes, one line per message, and a summary; it returns how
// many messages failed again (failed or unknown).
func WriteResent(w io.Writer, n int, rs []alerts.Resent) (int, error) {
	if n == 0 {
		_, err := fmt.Fprintln(w, "nothing to resend")
		return 0, err
	}
	t := &cli.Table{}
	t.Add("watch", "channel", "key", "alerts", "outcome", "reason/error")
	failed := 0
	for _, r := range rs {
		why := r.Outcome.Reason
		if r.Outcome.Error != "" {
			why = r.Outcome.Error
		}
		if r.Outcome.Status == notify.StatusFailed || r.Outcome.Status == notify.StatusUnknown {
			failed++
		}
		t.Add(r.Watch, r.Channel, r.Key.String(), strconv.Itoa(r.Claims), string(r.Outcome.Status), why)
	}
	if err := t.Write(w); err != nil {
		return failed, err
	}
	_, err := fmt.Fprintf(w, "%d alerts put back to sending; %d messages, %d failed again\n", n, len(rs), failed)
	return failed, err
}

// Resend is the end of both commands' `notifications resend`: the service's Resend, its outcomes
// printed to w; the error (secrets scrubbed) says how many failed again, list naming the command
// that shows why.
func Resend(ctx context.Context, w io.Writer, svc *alerts.Service, f notify.ResendFilter, secrets []string, list string) error {
	n, rs, err := svc.Resend(ctx, f)
	failed, werr := WriteResent(w, n, rs)
	if err = cmp.Or(err, werr); err != nil {
		return cli.ScrubError(err, secrets)
	}
	if failed > 0 {
		return fmt.Errorf("notifications resend: %d messages failed again (%s --status failed shows why)", failed, list)
	}
	return nil
}
