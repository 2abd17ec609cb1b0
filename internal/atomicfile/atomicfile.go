// Package atomicfile replaces a file so that, after a crash, it is either the old file or the
// whole new one, never a mix.
package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrDirNotSynced is the meaning of a Write error that came after the rename: the new file is in
// place (a reader sees it), but the directory sync failed, so whether the rename survives a crash
// of the machine is unknown. The caller judges by what is on disk, not by the error alone.
var ErrDirNotSynced = errors.New("replaced, but the directory sync failed (durability unknown)")

// Write replaces path with what write writes: into a temporary file of its own in path's
// directory (os.CreateTemp, named ".<base>.tmp-*", so concurrent writers never share one), which
// is chmodded to perm, fsynced and closed, then renamed over path, and the directory fsynced so
// that the rename is durable. On an error before the rename the temporary file is removed and
// path is untouched; an error of the directory sync, after it, wraps ErrDirNotSynced. write must
// not close the file.
func Write(path string, perm os.FileMode, write func(f *os.File) error) error {
	return WriteSyncing(path, perm, SyncDir, write)
}

// WriteSyncing is Write with the directory sync given (nil: SyncDir): a test makes it fail.
func WriteSyncing(path string, perm os.FileMode, syncDir func(dir string) error, write func(f *os.File) error) (err error) {
	if syncDir == nil {
		syncDir = SyncDir
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	renamed := false
	defer func() {
		if err != nil && !renamed {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err := write(tmp); err != nil {
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	renamed = true
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("sync directory: %w: %w", ErrDirNotSynced, err)
	}
	return nil
}

// SyncDir makes a rename or a new entry in dir durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
