// The records of a segment file: each is framed by its length and a CRC-32C, and a batch's payload
// holds its site, count, time and events.

package spool

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
)

// Record types.
const (
	recBatch byte = 'B' // id, unix nanos, site, count, the events (one Encode per line)
	// recBatchOn is recBatch with, after the id, the batch its site's snapshot named when the
	// crawl began (its base): the next batch of a site says whether the one before it was saved.
	recBatchOn byte = 'D'
	recCommit  byte = 'C' // id: the snapshot naming the batch was saved
	recAbort   byte = 'A' // id: it was not; the batch is never sent
	recCopied  byte = 'O' // id: the batch is in the events file (synced)
)

const headerLen = 8 // u32 length of type+payload, u32 CRC-32C of type+payload

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var errTorn = errors.New("torn record")

// record is one record as scan reads it.
type record struct {
	typ   byte
	id    uint64
	n     int // bytes, header included
	site  string
	count int       // recBatch
	at    time.Time // recBatch
	base  uint64    // recBatchOn
	based bool      // recBatchOn
}

// parseRecord parses the record at the start of b: its type, payload and length. errTorn: b ends
// before the record does (a write cut short, or a damaged length running past the end).
func parseRecord(b []byte) (byte, []byte, int, error) {
	if len(b) < headerLen {
		return 0, nil, 0, errTorn
	}
	n := int(binary.BigEndian.Uint32(b))
	if n < 1 || n > events.MaxEventBytes*100000 {
		return 0, nil, 0, fmt.Errorf("record length %d out of range", n)
	}
	if len(b) < headerLen+n {
		return 0, nil, 0, errTorn
	}
	if !knownType(b[headerLen]) {
		return 0, nil, 0, fmt.Errorf("unknown record type %q", b[headerLen])
	}
	body := b[headerLen : headerLen+n]
	if crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(b[4:]) {
		return 0, nil, 0, errors.New("checksum mismatch")
	}
	return body[0], body[1:], headerLen + n, nil
}

func knownType(t byte) bool {
	return t == recBatch || t == recBatchOn || t == recCommit || t == recAbort || t == recCopied
}

// decodeRecord reads the whole record at the start of b: its length, type and CRC check and its
// payload has the fields of its type. (A batch's events are decoded only when they are read.)
func decodeRecord(b []byte) (record, error) {
	typ, payload, n, err := parseRecord(b)
	if err != nil {
		return record{}, err
	}
	if len(payload) < 8 {
		return record{}, fmt.Errorf("record %q too short", typ)
	}
	r := record{typ: typ, id: binary.BigEndian.Uint64(payload), n: n}
	switch typ {
	case recBatchOn:
		if len(payload) < 16 {
			return record{}, fmt.Errorf("record %q too short", typ)
		}
		r.base, r.based = binary.BigEndian.Uint64(payload[8:]), true
		r.typ = recBatch
		fallthrough
	case recBatch:
		if r.site, r.count, r.at, err = batchHeader(batchFields(typ, payload)); err != nil {
			return record{}, err
		}
	}
	return r, nil
}

// resync returns the offset of the first whole, valid record in b after from (-1: none): where a
// damaged record's neighbours resume.
func resync(b []byte, from int) int {
	for off := from; off+headerLen < len(b); off++ {
		if _, err := decodeRecord(b[off:]); err == nil {
			return off
		}
	}
	return -1
}

// batchFields is a batch record's payload from the 8 bytes before its time on (the id, or for
// recBatchOn its base): what batchHeader and batchEvents read.
func batchFields(typ byte, payload []byte) []byte {
	if typ == recBatchOn {
		return payload[8:]
	}
	return payload
}

func batchHeader(p []byte) (site string, count int, at time.Time, err error) {
	if len(p) < 8+8+2 {
		return "", 0, time.Time{}, errors.New("batch record too short")
	}
	at = time.Unix(0, int64(binary.BigEndian.Uint64(p[8:])))
	sl := int(binary.BigEndian.Uint16(p[16:]))
	if len(p) < 18+sl+4 {
		return "", 0, time.Time{}, errors.New("batch record too short")
	}
	site = string(p[18 : 18+sl])
	count = int(binary.BigEndian.Uint32(p[18+sl:]))
	return site, count, at, nil
}

func batchEvents(p []byte) ([]events.Event, error) {
	sl := int(binary.BigEndian.Uint16(p[16:]))
	body := p[18+sl+4:]
	var evs []events.Event
	for line := range bytes.SplitSeq(body, []byte{'\n'}) {
		if len(line) == 0 {
			continue
		}
		e, err := events.Decode(line)
		if err != nil {
			return nil, err
		}
		evs = append(evs, e)
	}
	return evs, nil
}

func encodeRecord(typ byte, id uint64, body []byte) []byte {
	rec := make([]byte, headerLen+1+8, headerLen+1+8+len(body))
	rec[headerLen] = typ
	binary.BigEndian.PutUint64(rec[headerLen+1:], id)
	rec = append(rec, body...)
	binary.BigEndian.PutUint32(rec, uint32(len(rec)-headerLen))
	binary.BigEndian.PutUint32(rec[4:], crc32.Checksum(rec[headerLen:], castagnoli))
	return rec
}
