// The Kafka side: the cursor of what was acknowledged, reading what is unsent, acks, and deleting
// what is done.

package spool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/internal/atomicfile"
)

// Pos is a position in the spool: every event of the batches before Batch, and the first Index
// events of Batch, are acknowledged.
type Pos struct {
	Batch uint64 `json:"batch"`
	Index int    `json:"index"`
}

// cursorFile is the JSON of <dir>/cursor.json: what Kafka (topic, cluster) acknowledged.
type cursorFile struct {
	Topic     string `json:"topic"`
	ClusterID string `json:"cluster_id"`
	Pos
}

// done reports whether b needs nothing more: aborted, or committed, in the events file and
// (Retain) acknowledged.
func (s *Spool) done(b *batch) bool {
	switch b.state {
	case aborted:
		return true
	case pending:
		return false
	}
	if s.opts.Out != nil && !b.copied {
		return false
	}
	if !s.opts.Retain && s.cursor == nil {
		return true
	}
	return s.acked(b, b.count)
}

func (s *Spool) acked(b *batch, n int) bool {
	if s.cursor == nil {
		return false
	}
	return b.id < s.cursor.Batch || (b.id == s.cursor.Batch && n <= s.cursor.Index)
}

// gc deletes the leading segments whose batches are all done (never the active one).
func (s *Spool) gc() {
	for len(s.segs) > 1 {
		seg := s.segs[0]
		n := 0
		for n < len(s.batches) && s.batches[n].seg == seg {
			if !s.done(s.batches[n]) {
				return
			}
			n++
		}
		if err := os.Remove(seg.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("spool: acknowledged segment not deleted", "segment", seg.path, "err", err)
			return
		}
		s.total -= seg.size
		s.segs = s.segs[1:]
		s.batches = s.batches[n:]
	}
}

// readCursor reads cursor.json; a missing or unreadable one leaves the cursor unset (everything
// retained is unsent: resent, which the consumer makes harmless).
func (s *Spool) readCursor() {
	b, err := os.ReadFile(filepath.Join(s.dir, "cursor.json"))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("spool: cursor unreadable; everything in the spool is sent again", "err", err)
		}
		return
	}
	var c cursorFile
	if err := json.Unmarshal(b, &c); err != nil {
		s.log.Warn("spool: cursor unreadable; everything in the spool is sent again", "err", err)
		return
	}
	s.cursor = &c
}

// OpenCursor starts reading for topic on the cluster clusterID. A cursor of another topic or
// cluster is replaced by one at the spool's end: the events it had not sent are written to a
// JSONL file beside the spool for `crawler replay` (logged with their count); left is how many.
func (s *Spool) OpenCursor(topic, clusterID string) (left int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.cursor
	switch {
	case c == nil:
		c = &cursorFile{Topic: topic, ClusterID: clusterID}
		if len(s.batches) > 0 {
			c.Batch = s.batches[0].id
		}
	case c.Topic != topic || c.ClusterID != clusterID:
		path := s.leftBehindPath("")
		left, err = s.export(path, s.unsent())
		s.log.Warn("spool: topic or Kafka cluster changed; a new cursor starts at the spool's end",
			"old_topic", c.Topic, "old_cluster_id", c.ClusterID, "topic", topic, "cluster_id", clusterID,
			"unsent_left_behind", left, "file", path, "note", "crawler replay FILE publishes them")
		if err != nil {
			return left, err
		}
		c = &cursorFile{Topic: topic, ClusterID: clusterID, Pos: Pos{Batch: s.lastID + 1}}
	default:
		return 0, nil
	}
	if err := s.saveCursor(c); err != nil {
		return left, err
	}
	s.cursor = c
	s.gc()
	return left, nil
}

// unsent returns the committed batches the cursor has not acknowledged (wholly).
func (s *Spool) unsent() []*batch {
	var bs []*batch
	for _, b := range s.batches {
		if b.state == committed && !s.acked(b, b.count) {
			bs = append(bs, b)
		}
	}
	return bs
}

// export writes the events of bs that the cursor has not acknowledged to path (JSONL).
func (s *Spool) export(path string, bs []*batch) (int, error) {
	n := 0
	err := atomicfile.Write(path, 0o644, func(f *os.File) error {
		for _, b := range bs {
			evs, err := s.read(b)
			if err != nil {
				return err
			}
			if s.cursor != nil && b.id == s.cursor.Batch {
				evs = evs[min(s.cursor.Index, len(evs)):]
			}
			for _, e := range evs {
				line, err := events.Encode(e)
				if err != nil {
					return err
				}
				if _, err := f.Write(append(line, '\n')); err != nil {
					return err
				}
				n++
			}
		}
		return nil
	})
	return n, err
}

// saveCursor replaces cursor.json by a rename, without fsync: it is written after every
// acknowledged write, and a cursor a crash loses or cuts short only makes the events after an
// older cursor (or the whole spool) go again, which the consumer makes harmless.
func (s *Spool) saveCursor(c *cursorFile) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	path := filepath.Join(s.dir, "cursor.json")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("save spool cursor: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("save spool cursor: %w", err)
	}
	return nil
}

// Item is one event to send and its position after it.
type Item struct {
	Event events.Event
	After Pos
}

// Next returns up to limit committed events after the cursor, in spool order, waiting for one
// while wait is true (until ctx ends). It stops before a batch not yet committed or aborted. It
// is for one reader (the Kafka sender): the batches are read and decoded outside the spool's
// lock, so a crawl's Prepare or Commit never waits for them.
func (s *Spool) Next(ctx context.Context, limit int, wait bool) ([]Item, error) {
	for {
		s.mu.Lock()
		plan, err := s.planLocked(limit)
		ch := s.changed
		s.mu.Unlock()
		if err != nil {
			return nil, err
		}
		if len(plan) > 0 || !wait {
			return s.readPlan(plan, limit)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// planned is a batch Next reads from index from on.
type planned struct {
	b    *batch
	from int
}

// planLocked picks the committed batches after the cursor that hold the next limit events.
func (s *Spool) planLocked(limit int) ([]planned, error) {
	if s.cursor == nil {
		return nil, errors.New("spool: no cursor open")
	}
	var plan []planned
	n := 0
	for _, b := range s.batches {
		if n >= limit {
			break
		}
		if s.acked(b, b.count) || b.state == aborted {
			continue
		}
		if b.state == pending {
			break
		}
		from := 0
		if b.id == s.cursor.Batch {
			from = s.cursor.Index
		}
		plan = append(plan, planned{b: b, from: from})
		n += b.count - from
	}
	return plan, nil
}

// readPlan reads the planned batches (their segments stay until the reader acknowledges them).
func (s *Spool) readPlan(plan []planned, limit int) ([]Item, error) {
	var items []Item
	for _, p := range plan {
		evs := s.cached.evs
		if s.cached.id != p.b.id || evs == nil {
			var err error
			if evs, err = s.read(p.b); err != nil {
				return items, err
			}
			s.cached.id, s.cached.evs = p.b.id, evs
		}
		for i := p.from; i < len(evs) && len(items) < limit; i++ {
			items = append(items, Item{Event: evs[i], After: Pos{Batch: p.b.id, Index: i + 1}})
		}
	}
	return items, nil
}

// Ack records that Kafka acknowledged everything up to p, and deletes what is then done.
func (s *Spool) Ack(p Pos) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cursor == nil {
		return errors.New("spool: no cursor open")
	}
	c := *s.cursor
	c.Pos = p
	if b := s.find(p.Batch); b != nil && p.Index >= b.count {
		c.Pos = Pos{Batch: p.Batch + 1}
	}
	if err := s.saveCursor(&c); err != nil {
		return err
	}
	s.cursor = &c
	s.gc()
	return nil
}
