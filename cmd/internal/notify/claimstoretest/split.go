package claimstoretest

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/events"
)

// longCourse is a long real-world course name (69 runes, 161 bytes), and a part as long, with
// characters Discord escapes.
const (
	longCourse = "[스카이72_골프앤리조트] 하늘코스_오션코스 *주중특가* (그린피_할인_이벤트_진행중) 회원_비회원_모두_예약가능 [선착순]"
	longPart   = "오션_코스_*전반*_9홀_[주중]_그린피_할인_이벤트_진행중_회원_비회원_모두_예약_가능_선착순_마감"
)

// chatMessages is a receiver of the three chat channels' requests: the text of each message.
type chatMessages struct {
	mu    sync.Mutex
	texts []string
}

func (c *chatMessages) serve(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body struct{ Text, Content string }
		if err := json.Unmarshal(b, &body); err != nil {
			t.Errorf("receiver: %v", err)
		}
		c.mu.Lock()
		c.texts = append(c.texts, body.Text+body.Content)
		c.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv
}

// senderNeverCutsAMessage: 20 matches of one crawl with long course names go out
// on Discord (2,000 characters after escaping), Telegram (4,096) and Slack (4,000) as messages
// within the channel's limit, none cut: every tee time arrives in exactly one whole line, and a
// claim is sent only when a message carried it. A single line longer than the limit is shortened
// and keeps its tee time, date and price.
func senderNeverCutsAMessage(t *testing.T, f Factory) {
	limits := map[string]int{"discord": 2000, "telegram": 4096, "slack": 4000}
	for _, typ := range []string{"discord", "telegram", "slack"} {
		t.Run(typ, func(t *testing.T) {
			t.Parallel()
			st := f.New(t)
			var rc chatMessages
			srv := rc.serve(t)
			ch := "type: " + typ + ", url_env: U, base_url: " + srv.URL
			if typ == "telegram" {
				ch = "type: telegram, token_env: U, chat_id: '1', min_interval: 1ms, base_url: " + srv.URL
			}
			cfg, err := notify.Parse([]byte("channels:\n  a: {"+ch+"}\nwatches:\n  - name: w\n    channels: [a]\n"),
				func(string) string { return "https://hooks.example/services/x" })
			if err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			course, part := longCourse, longPart
			if typ == "telegram" { // lines of about 250 characters
				course, part = longCourse+string([]rune(longCourse)[:40]), longPart+string([]rune(longPart)[:40])
			}
			var cs []notify.Claim
			for i := range 20 {
				cs = append(cs, claim("w", "a", teeTime(course, part, "c1", fmt.Sprintf("05:%02d", i), now)))
			}
			huge := teeTime(strings.Repeat("아주긴코스이름*", 700), part, "c2", "06:30", now) // one line over any limit
			cs = append(cs, claim("w", "a", huge))
			mustClaim(t, st, notify.ClaimBatch{Now: now, Claims: cs})
			s := &notify.Sender{Store: st, Channel: cfg.Channels["a"], Watches: cfg, Logger: slog.New(slog.DiscardHandler)}
			if _, err := s.Once(t.Context()); err != nil {
				t.Fatal(err)
			}
			rc.mu.Lock()
			defer rc.mu.Unlock()
			seen := map[string]int{}
			for _, text := range rc.texts {
				if n := len(utf16.Encode([]rune(text))); n > limits[typ] {
					t.Errorf("a message of %d characters, over %s's %d", n, typ, limits[typ])
				}
				for _, line := range strings.Split(text, "\n")[1:] {
					var tee []string
					for _, w := range strings.Fields(line) {
						if len(w) == 5 && w[2] == ':' {
							tee = append(tee, w)
						}
					}
					complete := strings.HasSuffix(line, "전 오픈") && strings.Contains(line, "100,000원") && strings.Contains(line, "2026-12-05")
					if !complete || len(tee) != 1 {
						t.Errorf("a cut line: %q", line)
						continue
					}
					seen[tee[0]]++
				}
			}
			for i := range 20 {
				if tt := fmt.Sprintf("05:%02d", i); seen[tt] != 1 {
					t.Errorf("tee time %s in %d messages, want 1", tt, seen[tt])
				}
			}
			if seen["06:30"] != 1 {
				t.Errorf("the over-long line's tee time arrived %d times, want once, shortened", seen["06:30"])
			}
			sent := 0
			for _, n := range list(t, st, notify.Filter{}) {
				if n.Status == string(notify.StatusSent) {
					sent++
				}
			}
			if sent != 21 || len(seen) != 21 {
				t.Errorf("%d claims sent, %d tee times delivered whole in %d messages; want 21 and 21", sent, len(seen), len(rc.texts))
			}
		})
	}
}

// teeTime is an opening of course and part at tee in crawl.
func teeTime(course, part, crawl, tee string, at time.Time) *events.Event {
	price, players := int64(100000), 4
	e := events.Opened(events.Listing{Source: "s", CourseName: course, CoursePart: part, RoundDate: "2026-12-05",
		PlayDate: "2026-12-05", TeeTime: tee, Values: events.Values{PriceKRW: &price, Players: &players}}, crawl, at)
	return &e
}

// splitDecidedOnceAcrossRestart: the split of a group is decided when it is first picked and
// persisted with its keys: after a restart, and with the "how long ago" grown, the same claims go
// out under the same keys as the same numbered parts, each within the limit.
func splitDecidedOnceAcrossRestart(t *testing.T, f Factory) {
	st := f.New(t)
	ch := &notify.Channel{Name: "a", Type: notify.Discord, Language: "ko"}
	at := time.Now()
	var cs []notify.Claim
	for i := range 20 {
		cs = append(cs, claim("w", "a", teeTime(longCourse, longPart, "c1", fmt.Sprintf("05:%02d", i), at)))
	}
	mustClaim(t, st, notify.ClaimBatch{Now: at, Claims: cs})
	shape := func(gs []notify.Group) string {
		var b strings.Builder
		for _, g := range gs {
			fmt.Fprintf(&b, "%s %d/%d %v\n", g.Key, g.Part, g.Parts, g.Keys())
		}
		return b.String()
	}
	pick := func() []notify.Group {
		gs, err := st.Pick(t.Context(), ch, time.Now(), 1000)
		if err != nil {
			t.Fatal(err)
		}
		return gs
	}
	first := pick()
	if len(first) < 2 {
		t.Fatalf("20 long matches on Discord in %d message(s), want several", len(first))
	}
	st = f.Reopen(t, st)
	again := pick()
	if shape(again) != shape(first) {
		t.Errorf("after a restart the messages are\n%s\nfirst\n%s", shape(again), shape(first))
	}
	for i, g := range again {
		evs := make([]*events.Event, len(g.Claims))
		for j, c := range g.Claims {
			evs[j] = c.Event
		}
		req, err := ch.Request(t.Context(), notify.Message{Key: g.Key, Watch: g.Watch, Events: evs, Now: at.Add(29 * time.Minute),
			Part: g.Part, Parts: g.Parts})
		if err != nil {
			t.Fatal(err)
		}
		var body struct{ Content string }
		if err := json.NewDecoder(req.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		header, _, _ := strings.Cut(body.Content, "\n")
		if n := len(utf16.Encode([]rune(body.Content))); n > 2000 || !strings.HasSuffix(header, fmt.Sprintf("(%d/%d)", i+1, len(again))) {
			t.Errorf("message %d: %d characters, header %q", i+1, n, header)
		}
	}
}
