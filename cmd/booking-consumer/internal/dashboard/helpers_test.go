package dashboard

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/crawler/practice"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// hostileCourse is a course name a crawled page could carry: it must show as text, never run.
const hostileCourse = `<script>alert("xss")</script> 악성 CC`

var (
	practiceOnce sync.Once
	practiceSet  []events.Event
	practiceErr  error
)

// practiceEvents is the default practice set (crawler sim --generate FILE --days 21 --seed 1).
func practiceEvents(t testing.TB) []events.Event {
	t.Helper()
	practiceOnce.Do(func() {
		var buf bytes.Buffer
		if _, practiceErr = practice.Generate(context.Background(), &buf, practice.Options{Days: 21, Seed: 1}); practiceErr != nil {
			return
		}
		for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
			e, err := events.Decode(line)
			if err != nil {
				practiceErr = err
				return
			}
			practiceSet = append(practiceSet, e)
		}
	})
	if practiceErr != nil {
		t.Fatalf("practice set: %v", practiceErr)
	}
	return practiceSet
}

// hostileEvents opens and books one listing whose course name is hostileCourse.
func hostileEvents() []events.Event {
	price, players := int64(99000), 4
	at := time.Date(2026, 4, 10, 9, 0, 0, 0, time.FixedZone("KST", 9*3600))
	key := events.ListingKey("sim-golf", hostileCourse, "", "2026-04-19", "07:00")
	base := events.Event{SchemaVersion: 1, Source: "sim-golf", ListingKey: key, CourseName: hostileCourse,
		RoundDate: "04/19(일)", PlayDate: "2026-04-19", TeeTime: "07:00", Values: events.Values{PriceKRW: &price, Players: &players}}
	open, closed := base, base
	open.EventID, open.EventType, open.OccurredAt, open.CrawlID = uuid.NewSHA1(uuid.NameSpaceURL, []byte("hostile-open")), events.ListingOpened, at, "sim-golf@x"
	closed.EventID, closed.EventType, closed.OccurredAt, closed.CrawlID = uuid.NewSHA1(uuid.NameSpaceURL, []byte("hostile-close")), events.ListingClosed, at.Add(3*time.Hour), "sim-golf@y"
	closed.CloseReason = events.Booked
	return []events.Event{open, closed}
}

// ingest stores evs through store.Ingest (the consumer's path, without Kafka) in batches of 1000.
func ingest(t testing.TB, s *store.Store, evs []events.Event) {
	t.Helper()
	for i := 0; i < len(evs); i += 1000 {
		var batch []store.Message
		for j, e := range evs[i:min(i+1000, len(evs))] {
			v, err := events.Encode(e)
			if err != nil {
				t.Fatal(err)
			}
			e := e
			batch = append(batch, store.Message{Topic: "booking-events", Partition: (i + j) % 3, Offset: int64(i + j),
				Key: []byte(e.ListingKey), Value: v, Event: &e})
		}
		if _, err := s.Ingest(t.Context(), batch); err != nil {
			t.Fatalf("ingest: %v", err)
		}
	}
}

// practiceDB is a fresh database holding the practice set and the hostile listing.
func practiceDB(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	pool, url := storetest.NewDBURL(t)
	s := store.New(pool)
	ingest(t, s, practiceEvents(t))
	ingest(t, s, hostileEvents())
	return pool, url
}

// practiceAsOf is the end of the practice season: its charts are full as of then.
var practiceAsOf = time.Date(2026, 4, 21, 23, 59, 0, 0, time.FixedZone("KST", 9*3600))

func newTestHandler(t testing.TB, pool *pgxpool.Pool, mod func(*Config)) *Handler {
	t.Helper()
	cfg := Config{Store: store.New(pool), AsOf: func() time.Time { return practiceAsOf }}
	if mod != nil {
		mod(&cfg)
	}
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func get(t testing.TB, h http.Handler, target string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}
