package crawler

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/golfcrawler/golf-crawler/internal/atomicfile"
)

// ErrCorruptState is the meaning of a Load error caused by the file's content (not by I/O): the
// file must be deleted or repaired by hand before the source can be crawled again.
var ErrCorruptState = errors.New("corrupt crawler state")

// stateVersion is the version of the snapshot file format Save writes. Load also reads version 1
// (before epochs, lifetimes, tombstones and collapse tracking: every new field starts at its zero
// value); a file of any other version is refused rather than misread.
const stateVersion = 2

// StateDir stores one snapshot file per source in Dir. Each file is replaced atomically, so a
// crash mid-save leaves the previous snapshot; a file is read only by Load of the same source.
// One crawler process per Dir: Lock takes an exclusive lock on it (the Runner does).
type StateDir struct {
	Dir string
	// SyncDir makes the rename of a saved snapshot durable; nil: atomicfile.SyncDir. A test makes
	// it fail (after the rename, as EIO on a real disk does).
	SyncDir func(dir string) error
}

// stateFile is the JSON layout of a snapshot file.
type stateFile struct {
	Version int `json:"version"`
	Snapshot
}

// Path returns the file that holds source's snapshot: a readable prefix of the name (letters,
// digits, '-' and '_' only, at most 40 bytes) and 16 hex digits of its SHA-256, so that two
// sources never share a file and no name (../x, /etc, "") can leave Dir.
func (s StateDir) Path(source string) string {
	var b strings.Builder
	for _, r := range source {
		if b.Len() >= 40 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	sum := sha256.Sum256([]byte(source))
	return filepath.Join(s.Dir, "snapshot-"+b.String()+"-"+hex.EncodeToString(sum[:8])+".json")
}

// Load returns source's last saved snapshot. A missing file is the first crawl: an empty snapshot
// (Listings non-nil) and no error. A file that does not parse, has another version, belongs to
// another source or holds an entry under a key that is not its listing's key is an error wrapping
// ErrCorruptState that names the file and says how to recover.
func (s StateDir) Load(source string) (Snapshot, error) {
	if source == "" {
		return Snapshot{}, errors.New("load crawler state: empty source name")
	}
	path := s.Path(source)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Snapshot{Source: source, Listings: map[string]SnapshotEntry{}}, nil
	}
	if err != nil {
		return Snapshot{}, fmt.Errorf("load crawler state of %q: %w", source, err)
	}
	corrupt := func(why string, args ...any) (Snapshot, error) {
		return Snapshot{}, fmt.Errorf("%w: %s: %s; delete the file to start %q from an empty snapshot "+
			"(its next crawl then emits listing_opened for every listing and no closes)",
			ErrCorruptState, path, fmt.Sprintf(why, args...), source)
	}
	var f stateFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return corrupt("%v", err)
	}
	if dec.More() {
		return corrupt("trailing data after the snapshot")
	}
	switch {
	case f.Version != stateVersion && f.Version != 1:
		return corrupt("version %d, want %d", f.Version, stateVersion)
	case f.Source != source:
		return corrupt("snapshot of source %q", f.Source)
	}
	if f.Listings == nil {
		f.Listings = map[string]SnapshotEntry{}
	}
	for k, e := range f.Listings {
		if k != e.Listing.Key() {
			return corrupt("entry %q holds listing %q", k, e.Listing.Key())
		}
	}
	return f.Snapshot, nil
}

// Save replaces snap.Source's snapshot file atomically: it writes a temporary file in Dir, syncs
// it, renames it over the old file and syncs Dir, so that after a crash the file is either the old
// snapshot or the new one, never a mix. It creates Dir if needed. An error of the directory sync,
// after the rename, wraps atomicfile.ErrDirNotSynced: the new snapshot is in place, only its
// durability is unknown. Save is Encode, then Write.
func (s StateDir) Save(snap Snapshot) error {
	enc, err := s.Encode(snap)
	if err != nil {
		return err
	}
	return s.Write(enc)
}

// EncodedSnapshot is a snapshot as Save writes it, made by Encode and put on disk by Write: the
// JSON, the CPU half of a save, can then be made beside other work (the Runner makes it beside the
// alerts' claim) while the file is written only when the order of the steps allows it.
type EncodedSnapshot struct {
	source string
	data   []byte
}

// Encode makes snap's file contents; it touches no file. It only reads snap.
func (s StateDir) Encode(snap Snapshot) (EncodedSnapshot, error) {
	if snap.Source == "" {
		return EncodedSnapshot{}, errors.New("save crawler state: empty source name")
	}
	if snap.Listings == nil {
		snap.Listings = map[string]SnapshotEntry{}
	}
	b, err := json.MarshalIndent(stateFile{Version: stateVersion, Snapshot: snap}, "", "\t")
	if err != nil {
		return EncodedSnapshot{}, fmt.Errorf("save crawler state of %q: %w", snap.Source, err)
	}
	return EncodedSnapshot{source: snap.Source, data: append(b, '\n')}, nil
}

// Write replaces the snapshot file of enc's source with enc, atomically (see Save).
func (s StateDir) Write(enc EncodedSnapshot) error {
	return s.write(enc, func(f *os.File, b []byte) error {
		_, err := f.Write(b)
		return err
	})
}

// save is Save with the write step injectable, so tests can fail it half way.
func (s StateDir) save(snap Snapshot, write func(*os.File, []byte) error) error {
	enc, err := s.Encode(snap)
	if err != nil {
		return err
	}
	return s.write(enc, write)
}

func (s StateDir) write(enc EncodedSnapshot, write func(*os.File, []byte) error) error {
	if enc.source == "" {
		return errors.New("save crawler state: empty source name")
	}
	err := os.MkdirAll(s.Dir, 0o755)
	if err == nil {
		err = atomicfile.WriteSyncing(s.Path(enc.source), 0o644, s.SyncDir, func(f *os.File) error { return write(f, enc.data) })
	}
	if err != nil {
		return fmt.Errorf("save crawler state of %q: %w", enc.source, err)
	}
	return nil
}
