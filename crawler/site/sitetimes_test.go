package site

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// timedSite compiles minimalSite with extra keys (YAML lines indented under the site).
func timedSite(t *testing.T, keys string) *Site {
	t.Helper()
	sites, err := ParseSites([]byte(minimalSite + keys))
	if err != nil {
		t.Fatal(err)
	}
	return sites[0]
}

// timesOf is the site's SiteTimes under global.
func timesOf(t *testing.T, keys, global string) *SiteTimes {
	t.Helper()
	st, err := timedSite(t, keys).Times(global)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// kst is a time in Asia/Seoul; 2026-03-09 is a Monday.
func kst(day, h, m, s int) time.Time { return time.Date(2026, 3, day, h, m, s, 0, Seoul()) }

// TestSiteTimesNext: the fake clock is Next's argument; each row is one question and its answer.
func TestSiteTimesNext(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, keys, global string
		after, want        time.Time
	}{
		{"GlobalSchedule", "", "*/10 * * * *", kst(9, 9, 7, 0), kst(9, 9, 10, 0)},
		{"OwnScheduleOverridesGlobal", "    schedule: \"*/15 * * * *\"\n", "*/10 * * * *", kst(9, 9, 7, 0), kst(9, 9, 15, 0)},
		{"StrictlyAfter", "    schedule: \"*/15 * * * *\"\n", "", kst(9, 9, 15, 0), kst(9, 9, 30, 0)},
		{"EveryIsAnchored", "    schedule: \"@every 5m\"\n", "", kst(9, 9, 7, 30), kst(9, 9, 10, 0)},
		{"ActiveBeforeStart", "    active_hours: \"05:00-23:00\"\n", "*/10 * * * *", kst(9, 4, 59, 59), kst(9, 5, 0, 0)},
		{"ActiveAtStart", "    active_hours: \"05:00-23:00\"\n", "*/10 * * * *", kst(9, 5, 0, 0), kst(9, 5, 10, 0)},
		{"ActiveLastRun", "    active_hours: \"05:00-23:00\"\n", "*/10 * * * *", kst(9, 22, 45, 0), kst(9, 22, 50, 0)},
		{"ActiveEndExcluded", "    active_hours: \"05:00-23:00\"\n", "*/10 * * * *", kst(9, 22, 50, 0), kst(10, 5, 0, 0)},
		{"ActiveToMidnight", "    active_hours: \"05:00-24:00\"\n", "0 * * * *", kst(9, 23, 0, 0), kst(10, 5, 0, 0)},
		{"OvernightEvening", "    active_hours: \"22:00-06:00\"\n", "0 * * * *", kst(9, 6, 0, 0), kst(9, 22, 0, 0)},
		{"OvernightPastMidnight", "    active_hours: \"22:00-06:00\"\n", "0 * * * *", kst(9, 23, 30, 0), kst(10, 0, 0, 0)},
		{"OvernightLastRun", "    active_hours: \"22:00-06:00\"\n", "0 * * * *", kst(10, 4, 0, 0), kst(10, 5, 0, 0)},
		{"OvernightEndExcluded", "    active_hours: \"22:00-06:00\"\n", "0 * * * *", kst(10, 5, 0, 0), kst(10, 22, 0, 0)},
		{"BurstStart", burstKeys, "*/10 * * * *", kst(9, 8, 59, 59), kst(9, 9, 0, 0)},
		{"BurstTick", burstKeys, "*/10 * * * *", kst(9, 9, 0, 0), kst(9, 9, 0, 30)},
		{"BurstMidTick", burstKeys, "*/10 * * * *", kst(9, 9, 4, 10), kst(9, 9, 4, 30)},
		{"BurstLastTick", burstKeys, "*/10 * * * *", kst(9, 9, 9, 0), kst(9, 9, 9, 30)},
		{"BurstOverBackToSchedule", burstKeys, "*/10 * * * *", kst(9, 9, 9, 30), kst(9, 9, 10, 0)},
		{"BurstOver", burstKeys, "*/10 * * * *", kst(9, 9, 10, 0), kst(9, 9, 20, 0)},
		{"NoBurstOnTuesday", burstKeys, "*/10 * * * *", kst(10, 8, 59, 59), kst(10, 9, 0, 0)},
		{"NoBurstOnTuesdayTick", burstKeys, "*/10 * * * *", kst(10, 9, 0, 0), kst(10, 9, 10, 0)},
		{"MonthlyBurst", "    burst: [{at: \"10 09:00\", every: 1m, for: 5m}]\n", "0 * * * *", kst(10, 9, 2, 0), kst(10, 9, 3, 0)},
		{"MonthlyBurstOtherDay", "    burst: [{at: \"10 09:00\", every: 1m, for: 5m}]\n", "0 * * * *", kst(11, 9, 2, 0), kst(11, 10, 0, 0)},
		{"BurstOutsideActiveHours", "    active_hours: \"10:00-18:00\"\n" + burstKeys, "0 * * * *", kst(9, 8, 0, 0), kst(9, 10, 0, 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := timesOf(t, tc.keys, tc.global).Next(tc.after); !got.Equal(tc.want) {
				t.Errorf("Next(%s) = %s, want %s", tc.after, got, tc.want)
			}
		})
	}
}

const burstKeys = "    burst: [{at: \"MON 09:00\", every: 30s, for: 10m}]\n"

// TestSiteTimesBurstAroundItsTime: from 08:50 to 09:30 on a Monday a 30 s burst of 10 minutes
// adds its 20 ticks (09:00:00 .. 09:09:30) to the schedule's 08:50, 09:10, 09:20 and 09:30.
func TestSiteTimesBurstAroundItsTime(t *testing.T) {
	t.Parallel()
	st := timesOf(t, burstKeys, "*/10 * * * *")
	var got []time.Time
	for at := st.Next(kst(9, 8, 49, 0)); !at.After(kst(9, 9, 30, 0)); at = st.Next(at) {
		got = append(got, at)
	}
	want := []time.Time{kst(9, 8, 50, 0)}
	for i := range 20 {
		want = append(want, kst(9, 9, 0, 0).Add(time.Duration(i)*30*time.Second))
	}
	want = append(want, kst(9, 9, 10, 0), kst(9, 9, 20, 0), kst(9, 9, 30, 0))
	if len(got) != len(want) {
		t.Fatalf("%d times %v, want %d %v", len(got), got, len(want), want)
	}
	for i := range want {
		if !got[i].Equal(want[i]) {
			t.Errorf("time %d = %s, want %s", i, got[i], want[i])
		}
	}
	if !st.InBurst(kst(9, 9, 9, 59)) || st.InBurst(kst(9, 9, 10, 0)) || st.InBurst(kst(9, 8, 59, 59)) {
		t.Error("InBurst is wrong at the burst's edges")
	}
}

// TestSiteTimesJitterBounds: over two days every jittered run is within [base, base+jitter) of
// its scheduled time, the runs keep their order, the same seed gives the same times, and the
// jitter really spreads them (not all on the minute).
func TestSiteTimesJitterBounds(t *testing.T) {
	t.Parallel()
	const jitter = 4 * time.Minute
	st := timesOf(t, "    jitter: 4m\n", "*/10 * * * *")
	other := st.WithSeed(42)
	var prev time.Time
	distinct := map[time.Duration]bool{}
	differ := 0
	for at := st.Next(kst(9, 0, 0, 0)); at.Before(kst(11, 0, 0, 0)); at = st.Next(at) {
		base := at.Truncate(10 * time.Minute)
		if d := at.Sub(base); d < 0 || d >= jitter {
			t.Fatalf("run %s is %s after its scheduled time; want [0, %s)", at, d, jitter)
		}
		if !prev.IsZero() && base.Sub(prev.Truncate(10*time.Minute)) != 10*time.Minute {
			t.Fatalf("run %s follows %s: a scheduled run was lost or doubled", at, prev)
		}
		if again := st.Next(at.Add(-time.Nanosecond)); !again.Equal(at) {
			t.Fatalf("Next is not deterministic: %s then %s", at, again)
		}
		if o := other.Next(base.Add(-time.Nanosecond)); !o.Equal(at) {
			differ++
		}
		distinct[at.Sub(base)] = true
		prev = at
	}
	if len(distinct) < 100 || differ < 200 {
		t.Errorf("%d distinct delays, %d runs differ under another seed; want the jitter to spread them", len(distinct), differ)
	}
}

func TestSiteTimesUpcoming(t *testing.T) {
	t.Parallel()
	got := timesOf(t, "    schedule: \"0 9 * * *\"\n", "").Upcoming(kst(9, 10, 0, 0), 5)
	if len(got) != 5 || !got[0].Equal(kst(10, 9, 0, 0)) || !got[4].Equal(kst(14, 9, 0, 0)) {
		t.Errorf("Upcoming = %v, want 09:00 on the 10th..14th", got)
	}
}

// TestSiteTimesDeadline: the default deadline is 0.8 × the site's own interval.
func TestSiteTimesDeadline(t *testing.T) {
	t.Parallel()
	if d := timesOf(t, "    schedule: \"*/5 * * * *\"\n", "*/10 * * * *").Deadline(); d != 4*time.Minute {
		t.Errorf("deadline %s, want 4m", d)
	}
	if d := timesOf(t, "", "*/10 * * * *").Deadline(); d != 8*time.Minute {
		t.Errorf("deadline %s, want 8m", d)
	}
}

func TestSiteTimesErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, keys, want string }{
		{"BadSchedule", "    schedule: \"*/61 * * *\"\n", "schedule"},
		{"JitterOverHalf", "    schedule: \"*/10 * * * *\"\n    jitter: 5m1s\n", "more than half the schedule's interval"},
		{"JitterOverDeadline", "    deadline: 1m\n    jitter: 2m\n", "longer than the deadline"},
		{"NegativeJitter", "    jitter: -1s\n", "must not be negative"},
		{"ActiveNoDash", "    active_hours: \"05:00\"\n", "05:00-23:00"},
		{"ActiveBadClock", "    active_hours: \"05:00-25:00\"\n", "not a time of day"},
		{"ActiveSame", "    active_hours: \"00:00-24:00\"\n", "the same time"},
		{"BurstTooFast", "    burst: [{at: \"MON 09:00\", every: 5s, for: 1m}]\n", "at least 10s"},
		{"BurstShort", "    burst: [{at: \"MON 09:00\", every: 1m, for: 30s}]\n", "at least every"},
		{"BurstTooLong", "    burst: [{at: \"09:00\", every: 1m, for: 25h}]\n", "at most the gap"},
		{"BurstBadDay", "    burst: [{at: \"MONDAY 09:00\", every: 1m, for: 5m}]\n", "must be a weekday"},
		{"BurstBadDom", "    burst: [{at: \"32 09:00\", every: 1m, for: 5m}]\n", "between 1 and 31"},
		{"NegativeMissesInterval", "    misses_min_interval: -1m\n", "must not be negative"},
		{"BurstBadClock", "    burst: [{at: \"MON 9\", every: 1m, for: 5m}]\n", "not a time of day"},
		{"WatchedTooOften", "    watched_every: 5s\n", "watched_every is 5s; it must be at least 10s"},
		{"NegativeBudget", "    watched_budget: -1\n", "watched_budget is -1"},
		{"ConfirmTooLate", "    confirm_after: 11m\n", "confirm_after is 11m0s"},
		{"NegativeConfirm", "    confirm_after: -1s\n", "confirm_after is -1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseSites([]byte(minimalSite + tc.keys))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	// Without a schedule: key the jitter is checked against the global schedule, by Times.
	_, err := timedSite(t, "    jitter: 6m\n").Times("*/10 * * * *")
	if err == nil || !strings.Contains(err.Error(), "the global schedule") {
		t.Errorf("Times with a jitter over half the global interval: %v", err)
	}
}

// TestSiteTimesMissesMinInterval: a burst bounds misses to the global interval (less the jitter);
// misses_min_interval overrides it; a site without either counts every miss.
func TestSiteTimesMissesMinInterval(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		keys string
		want time.Duration
	}{
		{"", 0},
		{"    schedule: \"@every 30s\"\n", 0},
		{burstKeys, 10 * time.Minute},
		{burstKeys + "    jitter: 2m\n", 8 * time.Minute},
		{burstKeys + "    misses_min_interval: 30m\n", 30 * time.Minute},
		{"    misses_min_interval: 5m\n", 5 * time.Minute},
	} {
		if got := timesOf(t, tc.keys, "*/10 * * * *").MissesMinInterval(10 * time.Minute); got != tc.want {
			t.Errorf("%q: %s, want %s", tc.keys, got, tc.want)
		}
	}
}

// TestDocsScheduleExampleCompiles: the example of docs/sites.md's "Schedules per site" is a valid
// site's keys, and crawler check would print bursts for it.
func TestDocsScheduleExampleCompiles(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "sites.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "## Schedules per site")
	_, after, ok2 := strings.Cut(after, "```yaml\n")
	example, _, ok3 := strings.Cut(after, "```\n")
	name, keys, ok4 := strings.Cut(example, "\n")
	if !ok || !ok2 || !ok3 || !ok4 || !strings.Contains(name, "- name:") {
		t.Fatal("docs/sites.md has no site example under \"## Schedules per site\"")
	}
	st := timesOf(t, keys, "*/10 * * * *") // crawler.DefaultSchedule
	if !st.InBurst(st.Next(kst(9, 8, 59, 59))) {
		t.Errorf("the example's burst does not crawl at Monday 09:00: %s", st.Describe(true))
	}
}

// TestSiteTimesRefusesGaps (review 4, F6): times that never fire inside the active hours, or leave
// more than MaxCrawlGap between two crawls, are refused by Times, naming the site and its keys;
// an overnight window that holds the schedule, a weekly schedule and the global one pass.
func TestSiteTimesRefusesGaps(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, keys, global, want string
	}{
		{"NeverInsideHours", "    schedule: \"0 3 * * *\"\n    active_hours: \"05:00-23:00\"\n", "*/10 * * * *",
			`site "s": schedule "0 3 * * *" never fires inside active_hours 05:00-23:00`},
		{"NeverInsideOvernightHours", "    schedule: \"30 4 * * 1-5\"\n    active_hours: \"22:00-04:00\"\n", "*/10 * * * *",
			`site "s": schedule "30 4 * * 1-5" never fires inside active_hours 22:00-04:00`},
		{"GlobalNeverInsideHours", "    active_hours: \"05:00-23:00\"\n", "0 3 * * *",
			`site "s": the global schedule "0 3 * * *" never fires inside active_hours 05:00-23:00`},
		{"Monthly", "    schedule: \"0 9 1 * *\"\n", "*/10 * * * *", `site "s": schedule "0 9 1 * *" leaves 30 days without a crawl`},
		{"WeekendsOnlyInHours", "    schedule: \"0 9 * * 6\"\n    active_hours: \"10:00-12:00\"\n", "*/10 * * * *", "never fires inside active_hours 10:00-12:00"},
		{"OvernightHoldsIt", "    schedule: \"0 23 * * *\"\n    active_hours: \"22:00-04:00\"\n", "*/10 * * * *", ""},
		{"Weekly", "    schedule: \"0 9 * * 1\"\n", "*/10 * * * *", ""},
		{"Global", "", "*/10 * * * *", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := timedSite(t, tc.keys).Times(tc.global)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err %v, want one with %q", err, tc.want)
			}
		})
	}
}

// TestSiteTimesDemandKeys: watched_every, watched_budget and confirm_after default to 60s, 1 and
// 20s; confirm_after: 0s turns the confirm crawls off.
func TestSiteTimesDemandKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		keys    string
		every   time.Duration
		budget  float64
		confirm time.Duration
	}{
		{"", time.Minute, 1, 20 * time.Second},
		{"    watched_every: 30s\n    watched_budget: 2.5\n    confirm_after: 0s\n", 30 * time.Second, 2.5, 0},
		{"    confirm_after: 45s\n", time.Minute, 1, 45 * time.Second},
	} {
		st := timesOf(t, tc.keys, "*/10 * * * *")
		if st.WatchedEvery() != tc.every || st.WatchedBudget() != tc.budget || st.ConfirmAfter() != tc.confirm {
			t.Errorf("%q: every %s, budget %g, confirm %s; want %s, %g, %s", tc.keys, st.WatchedEvery(), st.WatchedBudget(),
				st.ConfirmAfter(), tc.every, tc.budget, tc.confirm)
		}
	}
}
