package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
)

// Command is one subcommand: it gets the logger built from LOG_LEVEL and LOG_FORMAT and its
// arguments.
type Command func(ctx context.Context, logger *slog.Logger, args []string) error

// Dispatch runs the subcommand args names (def when args start with a flag), as both commands do:
// --help, -h and the subcommand `help` print help; the logger comes from LOG_LEVEL and
// LOG_FORMAT; lookup returns the subcommand of a name and its arguments, nil for an unknown name,
// which prints usage and is an ErrUsage; a subcommand's flag.ErrHelp (it printed its --help) is
// success.
func Dispatch(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer,
	def, usage, help string, lookup func(sub string, args []string) Command) error {
	sub, args, wantHelp := Subcommand(args, def)
	if wantHelp {
		fmt.Fprint(stderr, help)
		return nil
	}
	logger, err := NewLogger(getenv, stderr)
	if err != nil {
		return err
	}
	if sub == "help" {
		fmt.Fprint(stderr, help)
		return nil
	}
	cmd := lookup(sub, args)
	if cmd == nil {
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("%w: unknown subcommand %q", ErrUsage, sub)
	}
	err = cmd(ctx, logger, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

// Env is what every subcommand of a command gets: the environment as Getenv, the command's
// output, the logger built from LOG_LEVEL and LOG_FORMAT, and the command's name for its --help.
type Env struct {
	Program        string
	Getenv         func(string) string
	Stdout, Stderr io.Writer
	Logger         *slog.Logger
}

// NewFlagSet is NewFlagSet for one of the command's subcommands: its --help prints the
// subcommand's synopsis (usage), every flag with its default, and envHelp.
func (e Env) NewFlagSet(name, usage, envHelp string) *flag.FlagSet {
	return NewFlagSet(e.Stderr, e.Program, name, usage, envHelp)
}

// Lookup is a lookup for Dispatch over cmds: a subcommand gets env with the logger Dispatch built.
func Lookup(cmds map[string]func(context.Context, Env, []string) error, env Env) func(sub string, args []string) Command {
	return func(sub string, _ []string) Command {
		cmd, ok := cmds[sub]
		if !ok {
			return nil
		}
		return func(ctx context.Context, logger *slog.Logger, args []string) error {
			env.Logger = logger
			return cmd(ctx, env, args)
		}
	}
}
