package replay

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/golfcrawler/golf-crawler/events"
)

// errLineTooLong marks a line longer than events.MaxEventBytes: it is skipped as invalid without
// being held in memory.
var errLineTooLong = fmt.Errorf("%w: line longer than %d bytes", events.ErrTooLarge, events.MaxEventBytes)

// lineReader splits the input into lines ("\n", an optional "\r" before it is dropped) and numbers
// them from 1. Memory is bounded by events.MaxEventBytes whatever the input.
type lineReader struct {
	br    *bufio.Reader
	n     int   // lines returned so far
	bytes int64 // bytes consumed so far, for progress
	buf   []byte
}

func newLineReader(in io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(in, 64<<10)}
}

// next returns the next line and its number. A line over the limit comes back empty with
// errLineTooLong (its number counted, its bytes skipped); io.EOF means no more lines. The returned
// slice is valid until the next call.
func (l *lineReader) next() ([]byte, int, error) {
	l.buf = l.buf[:0]
	tooLong := false
	for {
		chunk, err := l.br.ReadSlice('\n')
		l.bytes += int64(len(chunk))
		if !tooLong {
			if len(l.buf)+len(chunk) > events.MaxEventBytes+2 { // +2: the "\r\n" is not part of the event
				tooLong = true
				l.buf = l.buf[:0]
			} else {
				l.buf = append(l.buf, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(l.buf) == 0 && !tooLong && len(chunk) == 0 {
				return nil, l.n, io.EOF
			}
		case err != nil:
			return nil, l.n + 1, err
		}
		l.n++
		if tooLong {
			return nil, l.n, errLineTooLong
		}
		line := bytes.TrimSuffix(l.buf, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		return line, l.n, nil
	}
}
