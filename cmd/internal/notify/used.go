package notify

import "slices"

// UsedChannels are the channels some watch names, and the command channels (their chat may
// make watches), sorted: the ones that need a sender.
func (c *Config) UsedChannels() []string {
	var out []string
	for name, ch := range c.Channels {
		if ch.Commands {
			out = append(out, name)
		}
	}
	for _, w := range c.Watches {
		for _, ch := range w.Channels {
			if !slices.Contains(out, ch) {
				out = append(out, ch)
			}
		}
	}
	slices.Sort(out)
	return out
}
