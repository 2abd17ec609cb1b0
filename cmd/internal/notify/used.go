package notify

import "slices"

// UsedChannels are the channels some watch names, sorted: the ones that need a sender.
func (c *Config) UsedChannels() []string {
	var out []string
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
