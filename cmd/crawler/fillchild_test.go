package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"syscall"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/events/spool"
)

// fillChildEnv makes this test binary the crawler (cli.Main with this process's arguments, as
// main runs it) whose state dir's disk fills right after a site crawl's spool append, instead of
// running tests: the first time a batch is appended and fsynced (spool.StepAppended, through
// faults.onStep) while the file fillArmEnv names exists, the file fillChildEnv names is written
// until its file system is full, and the arm file is removed (once). The batch is then in the
// spool and the crawl's next write, the alerts' claim in alerts.db (--watches), meets the full
// disk, whatever the sizes of the batch and the claim. The chaos suite's
// TestFullStateDirDuringClaim runs it (cmd/internal/chaos, by these two names).
const (
	fillChildEnv = "GOLF_TEST_FILL_CHILD" // the filler: a file on the state dir's file system
	fillArmEnv   = "GOLF_TEST_FILL_ARM"   // the arm file (elsewhere): while it exists, the next append fills the disk
)

// fillChildLine starts the line the child writes to stderr once it filled the disk.
const fillChildLine = "fill child: disk full after a spool append"

// fillChild runs the crawler with the fill on its spool's appended step; it returns the exit
// status (cli.Main exits by itself on an error).
func fillChild() int {
	filler, arm := os.Getenv(fillChildEnv), os.Getenv(fillArmEnv)
	var done atomic.Bool
	f := faults{onStep: func(step string) {
		if step != spool.StepAppended || done.Load() {
			return
		}
		if _, err := os.Stat(arm); err != nil {
			return
		}
		done.Store(true)
		if err := fillDisk(filler); err != nil {
			fmt.Fprintf(os.Stderr, "fill child: filling %s: %v\n", filler, err)
			return
		}
		if err := os.Remove(arm); err != nil {
			fmt.Fprintf(os.Stderr, "fill child: %v\n", err)
		}
		fmt.Fprintf(os.Stderr, "%s: %s fills its file system\n", fillChildLine, filler)
	}}
	cli.Main("crawler", func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
		return runWith(ctx, args, getenv, stdout, stderr, f)
	})
	return 0
}

// fillDisk appends zeros to file until its file system has no room left (ENOSPC); any other
// error is returned.
func fillDisk(file string) (err error) {
	out, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, out.Close()) }()
	buf := make([]byte, 1<<20)
	for {
		if _, err := out.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return nil
			}
			return err
		}
	}
}
