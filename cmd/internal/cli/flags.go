package cli

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// BrokerFlag is the name of the Kafka brokers flag in both commands (its variable is
// KAFKA_BOOTSTRAP).
const BrokerFlag = "kafka-bootstrap"

// NewFlagSet returns subcommand name's FlagSet of command prog, printing to w: its --help prints
// "Usage: PROG NAME [flags]", usage (the subcommand's synopsis), every flag with its default, and
// envHelp (the environment variables).
func NewFlagSet(w io.Writer, prog, name, usage, envHelp string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(w)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s %s [flags]\n\n%s\n\nFlags:\n", prog, name, usage)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), "\n"+envHelp)
	}
	return fs
}

// BrokersVar defines --kafka-bootstrap on fs (and the older spelling --bootstrap when alias is
// set), both writing into *dst: comma-separated brokers; parse them with kafkabus.ParseBrokers.
func BrokersVar(fs *flag.FlagSet, dst *string, def, usage string, alias bool) {
	fs.StringVar(dst, BrokerFlag, def, usage)
	if alias {
		fs.StringVar(dst, "bootstrap", def, "same as --"+BrokerFlag)
	}
}

// NewLoggerDefault is NewLogger with the level and format used when LOG_LEVEL or LOG_FORMAT is
// unset (a command whose output is for a person at a terminal prefers warn and text).
func NewLoggerDefault(getenv func(string) string, w io.Writer, level slog.Level, format string) (*slog.Logger, error) {
	return NewLogger(func(k string) string {
		v := getenv(k)
		switch {
		case strings.TrimSpace(v) != "":
			return v
		case k == "LOG_LEVEL":
			return level.String()
		case k == "LOG_FORMAT":
			return format
		}
		return v
	}, w)
}
