// Package crashpoint names the steps of a site crawl's commit (events/spool, by the commit rule)
// at which a test kills the crawler, to check what the next start makes of the files left at
// each: Hit does nothing unless a test set a hook with Set, which the product never does.
package crashpoint

import "sync/atomic"

// The steps, in the order a site crawl passes them (docs/spool.md, "The commit rule").
const (
	Appended    = "spool-appended"      // the batch is in the spool, fsynced; the snapshot is not saved yet
	Saved       = "snapshot-saved"      // the snapshot naming the batch is saved; no commit record yet
	Committed   = "commit-written"      // the commit record is written; the events file has not the batch yet
	OutAppended = "events-out-appended" // the batch is appended to the events file, not synced yet
	OutSynced   = "events-out-synced"   // the events file is synced; the record saying so is not written yet
)

// Steps are the steps in order.
var Steps = []string{Appended, Saved, Committed, OutAppended, OutSynced}

var hook atomic.Pointer[func(step string)]

// Set makes Hit call f (nil: nothing again). Tests only.
func Set(f func(step string)) {
	if f == nil {
		hook.Store(nil)
		return
	}
	hook.Store(&f)
}

// Hit says the crawl has reached step.
func Hit(step string) {
	if f := hook.Load(); f != nil {
		(*f)(step)
	}
}
