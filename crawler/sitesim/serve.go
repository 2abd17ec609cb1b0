package sitesim

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/golfcrawler/golf-crawler/internal/metricsserver"
)

// DefaultAddr is where `crawler sim` listens by default and where compose/dev/sites.yaml points.
const DefaultAddr = "127.0.0.1:8089"

// SpeedClock returns a clock that reads simStart at the real instant realStart and then runs
// speed times faster than real.
func SpeedClock(real func() time.Time, realStart, simStart time.Time, speed float64) func() time.Time {
	return func() time.Time {
		return simStart.Add(time.Duration(float64(real().Sub(realStart)) * speed))
	}
}

// DemoBookingSpeed divides the demo site's mean times to book: a weekend morning's 24 h become
// 6 minutes, a weekday afternoon's 240 h one hour, so a one-minute demo sees dozens of bookings.
const DemoBookingSpeed = 240

// DemoConfig is the preset `crawler sim` serves: the default courses, 12 tee times per part, a
// 14-day window, the real clock (so a crawler's "booked" or "expired", decided by its own clock,
// is right), and bookings DemoBookingSpeed times faster, counted from the moment the site starts
// (Epoch) so they lie ahead of the demo, not in the past.
func DemoConfig(seed int64) Config {
	return Config{
		Seed:           seed,
		Now:            time.Now,
		Epoch:          time.Now(),
		TeeTimesPerDay: 12,
		DaysAhead:      14,
		BookingSpeed:   DemoBookingSpeed,
	}
}

// ListenAndServe serves a Site over cfg on addr until ctx is cancelled, then shuts down within 5 s
// (metricsserver.Run, the serve loop of the metrics server too). It returns nil after a clean
// shutdown.
func ListenAndServe(ctx context.Context, addr string, cfg Config, logger *slog.Logger) error {
	site := New(cfg)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	logger.InfoContext(ctx, "simulated booking site listening", "addr", ln.Addr().String(),
		"seed", site.cfg.Seed, "sim_now", site.cfg.Now().Format(time.RFC3339))
	return metricsserver.Run(ctx, ln, logRequests(site, logger), "simulated site")
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func logRequests(h http.Handler, logger *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		start := time.Now()
		h.ServeHTTP(sw, r)
		logger.DebugContext(r.Context(), "sim request", "url", r.URL.RequestURI(), "status", sw.status,
			"duration", time.Since(start))
	})
}
