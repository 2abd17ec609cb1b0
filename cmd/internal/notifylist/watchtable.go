package notifylist

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
)

// WriteWatches writes the watches in force (the file's and the chat's) for both commands'
// `watches` subcommands: JSON lines when asJSON, else a table; each says where it came from.
func WriteWatches(w io.Writer, ws []*notify.Watch, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		for _, wa := range ws {
			if err := enc.Encode(map[string]any{"name": wa.Name, "from": wa.Origin(), "channels": wa.Channels, "muted": wa.Muted,
				"conditions": notify.Describe(wa, "en")}); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tFROM\tCHANNELS\tMUTED\tCONDITIONS")
	for _, wa := range ws {
		muted := "-"
		if wa.Muted {
			muted = "muted"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", wa.Name, wa.Origin(), strings.Join(wa.Channels, ","), muted, notify.Describe(wa, "en"))
	}
	return tw.Flush()
}
