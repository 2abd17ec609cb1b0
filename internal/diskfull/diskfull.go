// Package diskfull says whether an error is a full disk, whichever layer reports it: the kernel
// (ENOSPC, or EDQUOT for a quota) through os and io, or SQLite (SQLITE_FULL, also when it only
// has the error code). A full disk is an operator's problem with a known fix (free space); the
// callers log it as such instead of as corruption or an unknown failure.
package diskfull

import (
	"errors"
	"syscall"
)

// sqliteFull is SQLite's primary result code SQLITE_FULL ("database or disk is full").
const sqliteFull = 13

// Is reports whether err (or any error it wraps) is a full disk: syscall.ENOSPC or EDQUOT, or a
// SQLite error whose primary result code (the low byte of an extended code) is SQLITE_FULL. A
// SQLite error is recognised by its Code() int method (modernc.org/sqlite's *sqlite.Error), so
// that this package depends on no driver.
func Is(err error) bool {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return true
	}
	var coded interface{ Code() int }
	return errors.As(err, &coded) && coded.Code()&0xff == sqliteFull
}
