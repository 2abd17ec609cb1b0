package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"
)

// ParseOne parses args into fs and returns its one positional argument, which may come before,
// between or after the flags ("dead show 7 --json", "replay --dry-run FILE"). what names the
// argument in the error for a second one. Mistakes wrap ErrUsage; flag.ErrHelp is returned as it
// is; without a positional argument arg is "".
func ParseOne(fs *flag.FlagSet, args []string, what string) (arg string, err error) {
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return "", err
			}
			return "", fmt.Errorf("%w: %s: %v", ErrUsage, fs.Name(), err)
		}
		if fs.NArg() == 0 {
			return arg, nil
		}
		if arg != "" {
			return "", fmt.Errorf("%w: %s: one %s only, got %q and %q", ErrUsage, fs.Name(), what, arg, fs.Arg(0))
		}
		arg, rest = fs.Arg(0), fs.Args()[1:]
	}
}

// Location loads the time zone named by a --tz flag; an unknown name is a usage mistake.
func Location(tz string) (*time.Location, error) {
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, fmt.Errorf("%w: --tz %q: %v", ErrUsage, tz, err)
	}
	return loc, nil
}

// WriteJSON writes v to w as indented JSON (the --json output of the commands).
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
