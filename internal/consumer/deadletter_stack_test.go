package consumer_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/consumer"
	"github.com/golfcrawler/golf-crawler/internal/consumer/consumertest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store"
)

// deadLetteredBetween produces valid[0], bad[0], valid[1], bad[1], … and then the rest of valid
// to a one-partition topic, one message per request (a large value must not share a produce
// batch), so that bad value i sits at offset 2i+1 between valid events. It runs the consumer in
// batches of batchSize until every offset is committed, wants every valid event stored and one
// dead letter per bad value, at its offset, and returns the dead letters (at most one per bad
// value) for the caller to check their contents.
func deadLetteredBetween(t *testing.T, valid, bad []kafka.Message, batchSize int, timeout time.Duration) []deadLetter {
	t.Helper()
	addr, topic, db := onStack(t, 1)
	var msgs []kafka.Message
	for i, m := range bad {
		msgs = append(msgs, valid[i], m)
	}
	msgs = append(msgs, valid[len(bad):]...)
	for _, m := range msgs {
		kafkatest.Produce(t, addr, topic, []kafka.Message{m})
	}

	r := newChecked(t, addr, topic, kafkatest.Name(t, "g"), db)
	c := consumertest.Start(t, t.Context(), r, store.New(db), consumer.Config{BatchSize: batchSize})
	testkit.WaitFor(t, timeout, "every offset committed", func() bool { _, n := r.stats(); return n == len(msgs) })
	c.Stop(t)

	if n := countRows(t, db, "booking_events"); n != int64(len(valid)) {
		t.Errorf("booking_events = %d rows, want the %d valid events", n, len(valid))
	}
	dead := deadLetters(t, db)
	for i, d := range dead {
		if i >= len(bad) {
			t.Errorf("unexpected dead letter at offset %d: %s", d.offset, d.err)
		} else if d.offset != int64(2*i+1) {
			t.Errorf("dead letter %d at offset %d (%s); want offset %d", i, d.offset, d.err, 2*i+1)
		}
	}
	if len(dead) != len(bad) {
		t.Errorf("%d dead letters, want %d", len(dead), len(bad))
	}
	return dead[:min(len(dead), len(bad))]
}

func TestPoisonMessagesAreDeadLetteredAndTheStreamGoesOn(t *testing.T) {
	t.Parallel()
	valid := kafkatest.Encode(t, testEvents(8, "poison"))
	mutate := func(f func(map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(valid[0].Value, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	poison := []struct {
		name, wantErr string
		value         []byte
	}{
		{"InvalidJSON", "not a JSON event", []byte(`{"event_id": "x",`)},
		{"MissingField", "missing field", mutate(func(m map[string]any) { delete(m, "crawl_id") })},
		{"WrongType", "not a JSON event", mutate(func(m map[string]any) { m["players"] = "four" })},
		{"UnknownEventType", "unknown event_type", mutate(func(m map[string]any) { m["event_type"] = "listing_exploded" })},
		{"OneMegabyte", "too large", []byte(`{"course_name":"` + strings.Repeat("a", 1_000_000) + `"}`)},
		{"InvalidUTF8", "invalid UTF-8", []byte(strings.Replace(string(valid[0].Value), "poison", "pois\xffon", 1))},
		{"February30", "bad play_date", mutate(func(m map[string]any) { m["play_date"] = "2026-02-30" })},
		{"Empty", "not a JSON event", []byte{}},
	}
	var bad []kafka.Message
	for _, p := range poison {
		bad = append(bad, kafka.Message{Key: []byte(p.name), Value: p.value})
	}

	dead := deadLetteredBetween(t, valid, bad, 5, 30*time.Second) // several batches, each mixing valid and poison
	for i, d := range dead {
		p := poison[i]
		wantSize := len(p.value)
		if wantSize > events.MaxEventBytes { // kept as a prefix since the memory bound
			wantSize = consumer.DeadValuePrefix
		}
		if !strings.Contains(d.err, p.wantErr) || len(d.raw) != wantSize {
			t.Errorf("%s: dead letter at offset %d (%d bytes): %q; want %d bytes, error containing %q",
				p.name, d.offset, len(d.raw), d.err, wantSize, p.wantErr)
		}
	}
}

// Values over the 64 KiB event limit are never held or stored whole: each
// dead letter keeps the first 4 KiB as raw_value, and its error gives the full length and the
// SHA-256 of the whole value; the valid events around them are stored.
func TestOversizeValuesAreDeadLetteredAsABoundedPrefix(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	var junk []kafka.Message
	for i := range 5 {
		v := make([]byte, 900<<10)
		for j := range v {
			v[j] = byte(r.UintN(256))
		}
		junk = append(junk, kafka.Message{Key: []byte(fmt.Sprint("junk-", i)), Value: v})
	}

	dead := deadLetteredBetween(t, kafkatest.Encode(t, testEvents(6, "oversize")), junk, 100, 60*time.Second)
	for i, d := range dead {
		want := junk[i].Value
		sum := fmt.Sprintf("%x", sha256.Sum256(want))
		if len(d.raw) != 4096 || string(d.raw) != string(want[:4096]) ||
			!strings.Contains(d.err, fmt.Sprint(len(want), " bytes")) || !strings.Contains(d.err, sum) {
			t.Errorf("dead letter at offset %d: %d bytes kept, error %q; want the first 4096 bytes, "+
				"the length %d and sha256 %s", d.offset, len(d.raw), d.err, len(want), sum)
		}
	}
}
