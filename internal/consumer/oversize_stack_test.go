package consumer_test

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/consumer"
	"github.com/golfcrawler/golf-crawler/internal/consumer/consumertest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store"
)

// Values over the 64 KiB event limit are never held or stored whole: each
// dead letter keeps the first 4 KiB as raw_value, and its error gives the full length and the
// SHA-256 of the whole value; the valid events around them are stored.
func TestOversizeValuesAreDeadLetteredAsABoundedPrefix(t *testing.T) {
	t.Parallel()
	addr, topic, db := onStack(t, 1)

	r := rand.New(rand.NewPCG(3, 4))
	valid := kafkatest.Encode(t, testEvents(6, "oversize"))
	var msgs []kafka.Message
	var junk [][]byte
	for i := range 5 {
		v := make([]byte, 900<<10)
		for j := range v {
			v[j] = byte(r.UintN(256))
		}
		junk = append(junk, v)
		msgs = append(msgs, valid[i], kafka.Message{Key: []byte(fmt.Sprint("junk-", i)), Value: v})
	}
	msgs = append(msgs, valid[5])
	for _, m := range msgs { // one by one: 900 KB values must not share a produce request
		kafkatest.Produce(t, addr, topic, []kafka.Message{m})
	}

	cr := newChecked(t, addr, topic, kafkatest.Name(t, "g"), db)
	c := consumertest.Start(t, t.Context(), cr, store.New(db), consumer.Config{BatchSize: 100})
	testkit.WaitFor(t, 60*time.Second, "every offset committed", func() bool { _, n := cr.stats(); return n == len(msgs) })
	c.Stop(t)

	if n := countRows(t, db, "booking_events"); n != 6 {
		t.Errorf("booking_events = %d, want the 6 valid events", n)
	}
	dead := deadLetters(t, db)
	for i, d := range dead {
		if i >= len(junk) {
			t.Errorf("unexpected dead letter at offset %d: %s", d.offset, d.err)
			continue
		}
		want := junk[i]
		sum := fmt.Sprintf("%x", sha256.Sum256(want))
		if d.offset != int64(2*i+1) || len(d.raw) != 4096 || string(d.raw) != string(want[:4096]) ||
			!strings.Contains(d.err, fmt.Sprint(len(want), " bytes")) || !strings.Contains(d.err, sum) {
			t.Errorf("dead letter at offset %d: %d bytes kept, error %q; want offset %d, the first 4096 bytes, "+
				"the length %d and sha256 %s", d.offset, len(d.raw), d.err, 2*i+1, len(want), sum)
		}
	}
	if len(dead) != len(junk) {
		t.Errorf("%d dead letters, want %d", len(dead), len(junk))
	}
}
