package alerts_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// wiringFiles are the alert wiring left in the two binaries (#50 item 2): their flags, their
// claim store and where their events come from; the rest is this package's, alertsink's or package crawler's.
var wiringFiles = []string{"../../crawler/alerts.go", "../../booking-consumer/notify.go"}

// maxWiringLines bounds the two wiring files together.
const maxWiringLines = 350

// builtInService matches what only the service builds: a sender, a poller, a commander, an HTTP
// client (or their metrics).
var builtInService = regexp.MustCompile(`notify\.Sender\{|chat\.Poller\{|chat\.Commander\{|http\.Client\{|` +
	`notify\.NewClient\(|notify\.NewMetrics\(|chat\.NewMetrics\(|http\.DefaultClient`)

// TestBinaryWiringIsSmall: the alert wiring of cmd/crawler and cmd/booking-consumer stays under
// maxWiringLines lines together and builds no sender, poller, commander or HTTP client: New does.
func TestBinaryWiringIsSmall(t *testing.T) {
	t.Parallel()
	total := 0
	for _, f := range wiringFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n := strings.Count(string(b), "\n")
		t.Logf("%s: %d lines", f, n)
		total += n
		for i, line := range strings.Split(string(b), "\n") {
			if builtInService.MatchString(line) {
				t.Errorf("%s:%d builds what the alert service builds: %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
	if total >= maxWiringLines {
		t.Errorf("the alert wiring of the two binaries is %d lines together, want under %d: move what is not "+
			"binary-specific into package alerts", total, maxWiringLines)
	}
}
