// Package spooltest reads and damages spool segment files for tests: the record framing of
// events/spool (record.go: a u32 length of type and payload, a u32 CRC-32C, the type byte, the
// payload) written down once for the tests that flip bytes on disk.
package spooltest

import (
	"encoding/binary"
	"os"
	"testing"
)

// headerLen is the spool's record header: the length and the CRC.
const headerLen = 8

// Record is one record of a segment as it lies on disk.
type Record struct {
	Off  int  // where its header starts
	Len  int  // its bytes, header included
	Type byte // 'B', 'D', 'C', 'A' or 'O'
}

// CRC is the offset of the record's CRC: flip a byte there and the record fails its check.
func (r Record) CRC() int { return r.Off + 4 }

// Records walks segment b by the records' lengths, to the last whole record (a torn tail ends
// it). It checks no CRC: it reads an intact segment to know where to damage it.
func Records(b []byte) []Record {
	var out []Record
	for off := 0; off+headerLen < len(b); {
		n := headerLen + int(binary.BigEndian.Uint32(b[off:]))
		if off+n > len(b) {
			break
		}
		out = append(out, Record{Off: off, Len: n, Type: b[off+headerLen]})
		off += n
	}
	return out
}

// DamageCRC flips a byte of the CRC of every record of type typ in the segment at path and
// returns how many it damaged.
func DamageCRC(tb testing.TB, path string, typ byte) int {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	n := 0
	for _, r := range Records(b) {
		if r.Type == typ {
			b[r.CRC()+1] ^= 0xff
			n++
		}
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		tb.Fatal(err)
	}
	return n
}
