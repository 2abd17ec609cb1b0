package notify

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/google/uuid"
)

// Resent is one outcome a resend recorded: the claims of one message (or the part of it skipped
// for one reason).
type Resent struct {
	Watch, Channel string
	Key            uuid.UUID // the message's Idempotency-Key: the one it failed with
	Claims         int
	Outcome        Outcome
}

// Resend is `notifications resend` on either store: it puts the claims f selects back to sending
// (ClaimStore.Resend; f.Channels is set to the channels of cfg, the only ones it can send on)
// and sends them at once through one Sender per channel made from tmpl (its Store, Channel,
// Watches and Finished are set here): each message under the key it failed with, exempt from the
// event-age check, the closed, watch_removed and watch_muted skips applied. It returns how many
// claims it put back and every outcome recorded, in order. A claim of the channel still sending
// from before (a single-process store's leftovers) goes out with them.
func Resend(ctx context.Context, st ClaimStore, cfg *Config, f ResendFilter, tmpl Sender) (int, []Resent, error) {
	f.Channels = f.Channels[:0:0]
	for name := range cfg.Channels {
		f.Channels = append(f.Channels, name)
	}
	slices.Sort(f.Channels)
	n, err := st.Resend(ctx, f)
	if err != nil || n == 0 {
		return n, nil, err
	}
	var mu sync.Mutex
	var out []Resent
	for _, name := range f.Channels {
		s := tmpl
		s.Store, s.Channel, s.Watches, s.Wake, s.Stop = st, cfg.Channels[name], cfg, nil, nil
		s.Finished = func(g Group, o Outcome) {
			mu.Lock()
			defer mu.Unlock()
			out = append(out, Resent{Watch: g.Watch, Channel: g.Channel, Key: g.Key, Claims: len(g.Claims), Outcome: o})
		}
		for {
			done, err := s.Once(ctx)
			if err != nil {
				return n, out, fmt.Errorf("resend on %s: %w", name, err)
			}
			if done == 0 {
				break
			}
		}
	}
	return n, out, nil
}
