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
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// Values over the 64 KiB event limit are never held or stored whole: each
// dead letter keeps the first 4 KiB as raw_value, and its error gives the full length and the
// SHA-256 of the whole value; the valid events around them are stored.
func TestOversizeValuesAreDeadLetteredAsABoundedPrefix(t *testing.T) {
	t.Parallel()
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Topic(t, addr, 1)
	db := storetest.NewDB(t)

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

	kr := newReader(t, addr, topic, kafkatest.Name(t, "g"))
	defer closeReader(t, kr)
	cr := &checkedReader{t: t, r: kr, db: db}
	m := &counters{}
	c := startConsumer(t, cr, store.New(db), m, 100)
	testkit.WaitFor(t, 60*time.Second, "every offset committed", func() bool { _, n := cr.stats(); return n == len(msgs) })
	c.stop(t)

	if n := countRows(t, db, "booking_events"); n != 6 {
		t.Errorf("booking_events = %d, want the 6 valid events", n)
	}
	rows, err := db.Query(t.Context(), `select kafka_offset, error, length(raw_value), raw_value from booking_events_dead order by kafka_offset`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	i := 0
	for rows.Next() {
		var off int64
		var msg string
		var size int
		var raw []byte
		if err := rows.Scan(&off, &msg, &size, &raw); err != nil {
			t.Fatal(err)
		}
		want := junk[i]
		sum := fmt.Sprintf("%x", sha256.Sum256(want))
		if off != int64(2*i+1) || size != 4096 || string(raw) != string(want[:4096]) ||
			!strings.Contains(msg, fmt.Sprint(len(want), " bytes")) || !strings.Contains(msg, sum) {
			t.Errorf("dead letter at offset %d: %d bytes kept, error %q; want offset %d, the first 4096 bytes, "+
				"the length %d and sha256 %s", off, size, msg, 2*i+1, len(want), sum)
		}
		i++
	}
	if i != len(junk) {
		t.Errorf("%d dead letters, want %d", i, len(junk))
	}
}
