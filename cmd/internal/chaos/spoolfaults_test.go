//go:build chaos

package chaos_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// outageRig is what the crawler outage scenarios share: the private stack, their sizes from the
// environment (the outage's length, the kills), a seeded random source (seed logged), a topic
// with its consumer into a database of its own, and the changing page in a sites file of one site.
type outageRig struct {
	s           privateStack
	outage      time.Duration
	kills       int
	seed        uint64
	rng         *rand.Rand
	addr, topic string
	db          *pgxpool.Pool
	cons        *runningConsumer
	page        *changingPage
	dir, sites  string
	kafkaEnv    []string // KAFKA_BOOTSTRAP and KAFKA_TOPIC for a crawler process
}

// newOutageRig sets up a scenario named name: outageEnv and killsEnv size it (defaults outage,
// kills).
func newOutageRig(t *testing.T, name, outageEnv, killsEnv string, outage time.Duration, kills int) *outageRig {
	r := &outageRig{s: stack(t), outage: testkit.EnvDuration(t, outageEnv, outage), kills: testkit.EnvInt(t, killsEnv, kills),
		seed: uint64(time.Now().UnixNano())}
	t.Logf("seed %d (outage %s, %d kills)", r.seed, r.outage, r.kills)
	r.rng = rand.New(rand.NewPCG(r.seed, 0))
	r.addr = kafkatest.Bootstrap(t)
	r.topic = kafkatest.Topic(t, r.addr, 3)
	r.db = storetest.NewDB(t)
	r.cons = startConsumer(t, r.addr, r.topic, kafkatest.Name(t, name), r.db, slog.New(slog.DiscardHandler))
	r.page = newChangingPage(t)
	r.dir = t.TempDir()
	r.sites = filepath.Join(r.dir, "sites.yaml")
	writeChaosFile(t, r.sites, "sites:\n"+sitesim.TeeListSite(name, r.page.url))
	r.kafkaEnv = []string{"KAFKA_BOOTSTRAP=" + r.addr, "KAFKA_TOPIC=" + r.topic}
	return r
}

// crawlerBinary is `crawler run` (1 s schedule, text logs at info, no metrics) on the rig's sites
// file and state dir, with Kafka and args added.
func (r *outageRig) crawlerBinary(t *testing.T, args ...string) func() *testkit.Proc {
	bin := builtBinary(t, "crawler")
	env := append([]string{"LOG_FORMAT=text", "LOG_LEVEL=info", "METRICS_ADDR=off"}, r.kafkaEnv...)
	return func() *testkit.Proc {
		return testkit.Start(t, bin, env, append([]string{"run", "--sites", r.sites, "--state-dir", filepath.Join(r.dir, "state"),
			"--schedule", "@every 1s"}, args...)...)
	}
}

// changingPage is a one-page tee list of six tee times whose prices change at every request, so
// every crawl derives six listing_changed events, until it is frozen.
type changingPage struct {
	url      string
	requests atomic.Int64
	frozen   atomic.Bool
}

func newChangingPage(t *testing.T) *changingPage {
	p := &changingPage{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n := p.requests.Load()
		if !p.frozen.Load() {
			n = p.requests.Add(1)
		}
		var b strings.Builder
		b.WriteString(`<html><body><table class="tee-list">`)
		for i := range 6 {
			fmt.Fprintf(&b, `<tr class="tee-row"><td class="course">스풀 CC</td><td class="part">OUT</td><td class="date">12/20</td>`+
				`<td class="time">07:%02d</td><td class="price">%d</td><td class="players">4</td></tr>`, i*10, 100000+1000*((n+int64(i))%50))
		}
		b.WriteString(`</table></body></html>`)
		_, _ = io.WriteString(w, b.String())
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL + "/tee"
	return p
}

// crawlerKills SIGKILLs a crawler process and starts the next one, at seeded random moments: half
// 300-2500 ms into the process, half 0-15 ms after a crawl's collection (in or before its spool
// append, save and commit: the window the commit rule is about). It keeps every process's logs.
// With selfKills, a process that SIGKILLed itself meanwhile counts as killed.
type crawlerKills struct {
	rng       *rand.Rand
	start     func() *testkit.Proc
	selfKills bool
	logs      strings.Builder
}

// kill kills p; between runs while no crawler runs (a fault on its files); the next process
// is returned.
func (k *crawlerKills) kill(t *testing.T, p *testkit.Proc, between func()) *testkit.Proc {
	t.Helper()
	if k.rng.IntN(2) == 0 {
		time.Sleep(time.Duration(300+k.rng.IntN(2200)) * time.Millisecond)
	} else {
		n := strings.Count(p.Logs.String(), `msg="crawl finished"`)
		testkit.WaitFor(t, 30*time.Second, "a crawl to finish collecting", func() bool {
			return strings.Count(p.Logs.String(), `msg="crawl finished"`) > n || k.selfKills && exited(p)
		})
		time.Sleep(time.Duration(k.rng.IntN(15)) * time.Millisecond)
	}
	if !k.selfKills || !exited(p) {
		p.Alive(t, "before its SIGKILL")
		_ = p.Cmd.Process.Signal(syscall.SIGKILL)
	}
	_ = p.Wait(t, 10*time.Second)
	k.logs.WriteString(p.Logs.String())
	if between != nil {
		between()
	}
	return k.start()
}

// restart starts the next process if p has exited (it killed itself), else returns p.
func (k *crawlerKills) restart(p *testkit.Proc) *testkit.Proc {
	if !exited(p) {
		return p
	}
	k.logs.WriteString(p.Logs.String())
	return k.start()
}

func exited(p *testkit.Proc) bool {
	select {
	case err := <-p.Exited:
		p.Exited <- err
		return true
	default:
		return false
	}
}

// stop stops the last process and returns every process's logs.
func (k *crawlerKills) stop(t *testing.T, p *testkit.Proc) string {
	t.Helper()
	if !k.selfKills || !exited(p) {
		p.Stop(t, 30*time.Second)
	}
	k.logs.WriteString(p.Logs.String())
	return k.logs.String()
}

// chainProblems: per listing, in the order of occurred_at, the events must form one unbroken
// chain: an opening, then changes whose previous price is the price before (a lost change breaks
// it; an aborted batch sent beside its re-derived one gives an id the wrong content, which breaks
// it too), ending at the page's last price. It returns what breaks it.
func chainProblems(evs []events.Event, last func(teeTime string) int64) []string {
	byKey := map[string][]events.Event{}
	for _, e := range evs {
		byKey[e.ListingKey] = append(byKey[e.ListingKey], e)
	}
	var bad []string
	for key, es := range byKey {
		slices.SortStableFunc(es, func(a, b events.Event) int { return a.OccurredAt.Compare(b.OccurredAt) })
		var cur int64
		for i, e := range es {
			switch {
			case i == 0 && e.EventType != events.ListingOpened:
				bad = append(bad, fmt.Sprintf("%s: the first event is %s", key, e.EventType))
			case i > 0 && (e.EventType != events.ListingChanged || e.Previous == nil || e.Previous.PriceKRW == nil):
				bad = append(bad, fmt.Sprintf("%s: event %d is %s", key, i, e.EventType))
			case i > 0 && *e.Previous.PriceKRW != cur:
				bad = append(bad, fmt.Sprintf("%s: event %d (%s) changes the price from %d, but the price before was %d: an event is missing or has another content",
					key, i, e.EventID, *e.Previous.PriceKRW, cur))
			}
			if e.PriceKRW != nil {
				cur = *e.PriceKRW
			}
		}
		if want := last(es[0].TeeTime); cur != want {
			bad = append(bad, fmt.Sprintf("%s: the last event leaves the price at %d, the page shows %d", key, cur, want))
		}
	}
	return bad
}

// atLastPrice reports whether every listing's latest stored event has the page's last price: the
// spool sends in order, so everything before it was sent.
func atLastPrice(evs []events.Event, last func(teeTime string) int64) bool {
	latest := map[string]events.Event{}
	for _, e := range evs {
		if l, ok := latest[e.ListingKey]; !ok || e.OccurredAt.After(l.OccurredAt) {
			latest[e.ListingKey] = e
		}
	}
	for _, e := range latest {
		if e.PriceKRW == nil || *e.PriceKRW != last(e.TeeTime) {
			return false
		}
	}
	return len(latest) > 0
}

// frozenPrice is the changing page's price of teeTime ("07:MM") once frozen (-1: not one of
// its tee times).
func (p *changingPage) frozenPrice(teeTime string) int64 {
	var mm int64
	if _, err := fmt.Sscanf(teeTime, "07:%d", &mm); err != nil {
		return -1
	}
	return 100000 + 1000*((p.requests.Load()+mm/10)%50)
}

// storedEvents reads every stored event back from its payload.
func storedEvents(t *testing.T, db *pgxpool.Pool) []events.Event {
	t.Helper()
	var payloads []string
	if err := retryDB(t, func(ctx context.Context) error {
		rows, _ := db.Query(ctx, "select payload::text from booking_events") // an error is in rows
		var err error
		payloads, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	}); err != nil {
		t.Fatal(err)
	}
	evs := make([]events.Event, 0, len(payloads))
	for _, p := range payloads {
		e, err := events.Decode([]byte(p))
		if err != nil {
			t.Fatalf("stored payload: %v", err)
		}
		evs = append(evs, e)
	}
	return evs
}

// spoolRecord is one record of a spool segment (events/spool's format: u32 length of type and
// payload, u32 CRC-32C, the type, the batch id, the rest). A batch record is typ 'B' here
// whether it says its base (type 'D': the crawler's) or not.
type spoolRecord struct {
	off, n int
	typ    byte
	id     uint64
	based  bool
}

// spoolRecords reads the whole records of the segment at path: those whose length, type and
// CRC-32C check, skipping what does not (damage the test made before), as the spool does.
func spoolRecords(t *testing.T, path string) ([]byte, []spoolRecord) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	var recs []spoolRecord
	for off := 0; off+17 <= len(b); {
		n := 8 + int(binary.BigEndian.Uint32(b[off:]))
		if n < 17 || off+n > len(b) || !bytes.ContainsRune([]byte("BDCAO"), rune(b[off+8])) ||
			crc32.Checksum(b[off+8:off+n], castagnoli) != binary.BigEndian.Uint32(b[off+4:]) {
			off++
			continue
		}
		r := spoolRecord{off: off, n: n, typ: b[off+8], id: binary.BigEndian.Uint64(b[off+9:])}
		if r.typ == 'D' {
			r.typ, r.based = 'B', true
		}
		recs = append(recs, r)
		off += n
	}
	return b, recs
}

// batchRecordTime is when a batch record was prepared (its u64 unix nanos after its id and base).
func batchRecordTime(rec []byte, based bool) time.Time {
	p := rec[8+1+8:]
	if based {
		p = p[8:]
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(p)))
}

// batchRecordEvents decodes a batch record's events (after its id and, when based, its base: u64
// time, u16 site length, the site, u32 count, JSON lines).
func batchRecordEvents(t *testing.T, rec []byte, based bool) []events.Event {
	t.Helper()
	p := rec[8+1+8:]
	if based {
		p = p[8:]
	}
	sl := int(binary.BigEndian.Uint16(p[8:]))
	var evs []events.Event
	for line := range bytes.SplitSeq(p[8+2+sl+4:], []byte{'\n'}) {
		if len(line) == 0 {
			continue
		}
		e, err := events.Decode(line)
		if err != nil {
			t.Fatalf("batch record: %v", err)
		}
		evs = append(evs, e)
	}
	return evs
}

// damageSpool flips one byte of one record of the newest spool segment, in its length, CRC or
// payload (seeded): a record of type typ ('B', 'C' or 'A'; a commit record when there is none
// to pick) whose batch is committed and unsent (unsent says so of its events) or, for an abort
// record, any. A batch record is picked only of a batch prepared after down (the broker's
// SIGKILL): its events are then lost with it. One prepared before may have been written to the
// broker's log as the broker was killed, its acknowledgement lost; unsent by the database then,
// it is stored once the broker is back, and counting it lost put each of its events twice in the
// chain ('event 2 changes the price from 106000, but the price before was 107000' in all six
// listings). It returns what it damaged and, for a batch record, its events: they are not sent
// (the damaged record's own cost).
func damageSpool(t *testing.T, rng *rand.Rand, spoolDir string, typ byte, unsent func([]events.Event) bool, down time.Time) (string, []events.Event) {
	t.Helper()
	segs, _ := filepath.Glob(filepath.Join(spoolDir, "seg-*.log"))
	if len(segs) == 0 {
		t.Fatal("no spool segment to damage")
	}
	slices.Sort(segs)
	path := segs[len(segs)-1]
	b, recs := spoolRecords(t, path)
	batches, committed, after := map[uint64][]events.Event{}, map[uint64]bool{}, map[uint64]bool{}
	for _, r := range recs {
		switch r.typ {
		case 'B':
			batches[r.id] = batchRecordEvents(t, b[r.off:r.off+r.n], r.based)
			after[r.id] = batchRecordTime(b[r.off:r.off+r.n], r.based).After(down)
		case 'C':
			committed[r.id] = true
		}
	}
	pick := func(typ byte) []spoolRecord {
		var out []spoolRecord
		for _, r := range recs {
			if r.typ == typ && (typ == 'A' || committed[r.id] && batches[r.id] != nil && unsent(batches[r.id]) && (typ != 'B' || after[r.id])) {
				out = append(out, r)
			}
		}
		return out
	}
	cands := pick(typ)
	if len(cands) == 0 {
		typ, cands = 'C', pick('C')
	}
	if len(cands) == 0 {
		t.Fatalf("no record to damage in %s (%d records)", path, len(recs))
	}
	r := cands[rng.IntN(len(cands))]
	var lost []events.Event
	if typ == 'B' {
		lost = batches[r.id]
	}
	field, at := "payload", r.off+8+rng.IntN(r.n-8)
	switch rng.IntN(3) {
	case 0:
		field, at = "length", r.off+2+rng.IntN(2) // runs past the next records, or out of step with them
	case 1:
		field, at = "crc", r.off+4+rng.IntN(4)
	}
	b[at] ^= byte(1 << rng.IntN(8))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%c record of batch %d, its %s (byte %d of %s)", typ, r.id, field, at, filepath.Base(path)), lost
}

// replayLeftBehind publishes every spool/left-behind-*.jsonl with `crawler replay` and returns
// how many files it published.
func replayLeftBehind(t *testing.T, bin, spoolDir string, env []string) int {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(spoolDir, "left-behind-*.jsonl"))
	for _, f := range files {
		cmd := exec.Command(bin, "replay", f)
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("crawler replay %s: %v\n%s", f, err, out)
		}
	}
	return len(files)
}

// TestSpoolDamageDuringOutage (review 4, F2): the crawler binary (`crawler run`, 1 s schedule,
// Kafka only, as review 4 ran it) crawls the changing page through a CHAOS_DAMAGE_OUTAGE (40 s)
// broker outage, SIGKILLed CHAOS_DAMAGE_KILLS (4) times during it; after each kill one byte of a
// record of the spool (a commit record, a batch record, an abort record when there is one, in
// turn) is flipped in its length, CRC or payload before the crawler starts again; one more kill
// after the broker is back. Then the page stops changing, the spool drains and the left-behind
// files are replayed. Nothing is lost but the damaged batch records' own events, and nothing is
// doubled: each listing's stored events, with those, form one unbroken chain of price changes
// ending at the page's price. A damaged batch record is one of a batch prepared after the broker's
// kill (damageSpool says why). On failure it logs the spool's log lines, the left-behind files and
// the broken chains (damageReport).
func TestSpoolDamageDuringOutage(t *testing.T) {
	r := newOutageRig(t, "damage", "CHAOS_DAMAGE_OUTAGE", "CHAOS_DAMAGE_KILLS", 40*time.Second, 4)
	s, rng, db, page := r.s, r.rng, r.db, r.page
	spoolDir := filepath.Join(r.dir, "state", "spool")
	k := &crawlerKills{rng: rng, start: r.crawlerBinary(t)}

	p := k.start()
	var lost, stored []events.Event
	t.Cleanup(func() { // stored is the last read: the test's context is done by now
		if t.Failed() {
			t.Log(damageReport(t, k.logs.String()+p.Logs.String(), spoolDir, stored, lost, page.frozenPrice))
		}
	})
	testkit.WaitFor(t, time.Minute, "events stored before the outage", func() bool { return count(t, db, "booking_events") > 0 })
	s.stopKafka(t, syscall.SIGKILL)
	down := time.Now()
	unsent := func(evs []events.Event) bool { return !anyStored(t, db, evs) }
	for i := range r.kills {
		p = k.kill(t, p, func() {
			what, l := damageSpool(t, rng, spoolDir, "CBA"[i%3], unsent, down)
			t.Logf("kill %d: damaged the %s", i+1, what)
			lost = append(lost, l...)
		})
	}
	time.Sleep(time.Until(down.Add(r.outage)))
	s.up(t)
	p = k.kill(t, p, nil)
	page.frozen.Store(true)
	testkit.WaitForf(t, 3*time.Minute, func() string { return fmt.Sprintf("the page's last prices stored (%d stored)", len(stored)) }, func() bool {
		stored = storedEvents(t, db)
		return atLastPrice(stored, page.frozenPrice)
	})
	replayed := replayLeftBehind(t, builtBinary(t, "crawler"), spoolDir, r.kafkaEnv)
	var bad []string
	testkit.WaitForf(t, time.Minute, func() string { return fmt.Sprintf("the chains whole (%d stored): %v", len(stored), bad) }, func() bool {
		stored = storedEvents(t, db)
		bad = chainProblems(append(slices.Clone(stored), lost...), page.frozenPrice)
		return len(bad) == 0
	})
	logs := k.stop(t, p)
	r.cons.stop(t)
	if anyStored(t, db, lost) {
		t.Errorf("an event of a damaged batch record is stored: the damage was not where the test put it")
	}
	t.Logf("%d requests; %d events stored, %d lost with their damaged batch records; %d damaged records skipped over the starts, %d batches left behind, %d left-behind files replayed, %d torn records cut",
		page.requests.Load(), len(stored), len(lost), strings.Count(logs, "damaged record skipped"),
		strings.Count(logs, "batch left behind"), replayed, strings.Count(logs, "torn last record cut"))
}

// anyStored reports whether any of evs is stored.
func anyStored(t *testing.T, db *pgxpool.Pool, evs []events.Event) bool {
	t.Helper()
	ids := make([]uuid.UUID, len(evs))
	for i, e := range evs {
		ids[i] = e.EventID
	}
	var n int
	if err := retryDB(t, func(ctx context.Context) error {
		return db.QueryRow(ctx, "select count(*) from booking_events where event_id = any($1)", ids).Scan(&n)
	}); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// damageReport says what a failed TestSpoolDamageDuringOutage saw: the crawler processes' spool
// log lines, each left-behind file's events, and the chain of every listing chainProblems finds
// broken (stored events, and those lost with a damaged batch record, marked so).
func damageReport(t *testing.T, logs, spoolDir string, stored, lost []events.Event, last func(teeTime string) int64) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("spool log lines:\n")
	for line := range strings.Lines(logs) {
		if strings.Contains(line, `msg="spool`) || strings.Contains(line, "spool:") {
			b.WriteString("  " + line)
		}
	}
	files, _ := filepath.Glob(filepath.Join(spoolDir, "left-behind-*.jsonl"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintf(&b, "%s: %v\n", filepath.Base(f), err)
			continue
		}
		fmt.Fprintf(&b, "%s:\n", filepath.Base(f))
		for line := range bytes.SplitSeq(bytes.TrimSpace(data), []byte{'\n'}) {
			e, err := events.Decode(line)
			if err != nil {
				fmt.Fprintf(&b, "  (%v)\n", err)
				continue
			}
			b.WriteString("  " + eventLine(e, false) + "\n")
		}
	}
	isLost, isStored := map[uuid.UUID]bool{}, map[uuid.UUID]bool{}
	for _, e := range lost {
		isLost[e.EventID] = true
	}
	for _, e := range stored {
		isStored[e.EventID] = true
	}
	all := append(slices.Clone(stored), lost...)
	broken := map[string]bool{}
	for _, p := range chainProblems(all, last) {
		key, _, _ := strings.Cut(p, ": ")
		broken[key] = true
	}
	for _, key := range slices.Sorted(maps.Keys(broken)) {
		var es []events.Event
		for _, e := range all {
			if e.ListingKey == key {
				es = append(es, e)
			}
		}
		slices.SortStableFunc(es, func(a, b events.Event) int { return a.OccurredAt.Compare(b.OccurredAt) })
		// Only the events around each break (and the last ones), as chainProblems finds them.
		near := map[int]bool{len(es) - 1: true, len(es) - 2: true}
		var cur int64
		for i, e := range es {
			if i > 0 && (e.Previous == nil || e.Previous.PriceKRW == nil || *e.Previous.PriceKRW != cur) || i == 0 && e.EventType != events.ListingOpened {
				for j := i - 3; j <= i+3; j++ {
					near[j] = true
				}
			}
			if e.PriceKRW != nil {
				cur = *e.PriceKRW
			}
		}
		fmt.Fprintf(&b, "chain of %s (%d events, those around its breaks):\n", key, len(es))
		for i, e := range es {
			if !near[i] {
				if near[i-1] {
					b.WriteString("  ...\n")
				}
				continue
			}
			line := eventLine(e, isLost[e.EventID])
			if isLost[e.EventID] && isStored[e.EventID] {
				line += " (and stored)"
			}
			b.WriteString("  " + line + "\n")
		}
	}
	return b.String()
}

// eventLine is one event for damageReport: occurred_at, tee time, id, previous price -> price.
func eventLine(e events.Event, lost bool) string {
	price := func(p *int64) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprint(*p)
	}
	prev := "-"
	if e.Previous != nil {
		prev = price(e.Previous.PriceKRW)
	}
	s := fmt.Sprintf("%s %s %s %s %s -> %s", e.OccurredAt.Format("15:04:05.000"), e.TeeTime, e.EventID, e.EventType, prev, price(e.PriceKRW))
	if lost {
		s += " (lost: damaged batch record)"
	}
	return s
}
