package sitesim

import (
	"hash/fnv"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// Faults are failures the site injects into its page routes (/ and /tee; never /robots.txt,
// /healthz or /ground-truth). Rate-based faults are decided by a hash of the seed, the fault kind
// and the page request's sequence number, so the same request sequence always meets the same
// faults. The *First faults count requests per request URI (path?query exactly as sent), so they
// hit every page the same way whatever order a parallel crawler fetches pages in. Precedence:
// MissingPages, FailPages, ThrottleFirst, FailFirst, SlowFirst, then the rates (429, 500, slow).
type Faults struct {
	ErrorRate     float64       // fraction of page requests answered 500
	Status429Rate float64       // fraction answered 429 with Retry-After
	RetryAfter    time.Duration // Retry-After sent with 429, whole seconds (rounded up); default 1 s
	SlowRate      float64       // fraction delayed by SlowDelay before being served
	SlowDelay     time.Duration // default 2 s; cut short when the client goes away

	MissingPages  []string // request URIs always answered 404
	FailPages     []string // request URIs always answered 500
	FailFirst     int      // each request URI's first FailFirst requests answered 500
	ThrottleFirst int      // each request URI's first ThrottleFirst requests answered 429
	SlowFirst     int      // each request URI's first SlowFirst requests delayed by SlowDelay
}

// InjectFaults replaces the site's faults; safe to call while serving. The per-URI request counts
// and the request sequence number are reset, so a test's faults start from a known state.
func (s *Site) InjectFaults(f Faults) {
	if f.RetryAfter <= 0 {
		f.RetryAfter = time.Second
	}
	if f.SlowDelay <= 0 {
		f.SlowDelay = 2 * time.Second
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = f
	s.requests = 0
	s.perPage = map[string]int{}
}

// Requests returns how many page requests (/ and /tee) the site has seen since the last
// InjectFaults, per request URI.
func (s *Site) Requests() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.perPage))
	for k, v := range s.perPage {
		out[k] = v
	}
	return out
}

// fault is what the site does to one page request.
type fault int

const (
	faultNone fault = iota
	faultMissing
	faultError
	faultThrottle
	faultSlow
)

// decide picks the fault for the n-th page request (0-based), the k-th (0-based) for its URI.
func (f *Faults) decide(seed int64, n uint64, uri string, k int) fault {
	switch {
	case slices.Contains(f.MissingPages, uri):
		return faultMissing
	case slices.Contains(f.FailPages, uri):
		return faultError
	case k < f.ThrottleFirst:
		return faultThrottle
	case k < f.FailFirst:
		return faultError
	case k < f.SlowFirst:
		return faultSlow
	case f.Status429Rate > 0 && uniform(seed, n, "429") < f.Status429Rate:
		return faultThrottle
	case f.ErrorRate > 0 && uniform(seed, n, "500") < f.ErrorRate:
		return faultError
	case f.SlowRate > 0 && uniform(seed, n, "slow") < f.SlowRate:
		return faultSlow
	}
	return faultNone
}

// uniform is a deterministic number in [0, 1) from (seed, n, kind).
func uniform(seed int64, n uint64, kind string) float64 {
	h := fnv.New64a()
	var b [16]byte
	for i := range 8 {
		b[i] = byte(uint64(seed) >> (8 * i))
		b[8+i] = byte(n >> (8 * i))
	}
	h.Write(b[:])
	h.Write([]byte(kind))
	return float64(h.Sum64()>>11) / (1 << 53)
}

// applyFaults decides and applies the request's fault; it reports whether the response was written.
func (s *Site) applyFaults(w http.ResponseWriter, r *http.Request) bool {
	uri := r.URL.RequestURI()
	s.mu.Lock()
	f := s.faults
	n := s.requests
	k := s.perPage[uri]
	s.requests++
	s.perPage[uri] = k + 1
	s.mu.Unlock()

	switch f.decide(s.cfg.Seed, n, uri, k) {
	case faultMissing:
		http.NotFound(w, r)
		return true
	case faultError:
		http.Error(w, "일시적인 오류입니다 (injected 500)", http.StatusInternalServerError)
		return true
	case faultThrottle:
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(f.RetryAfter.Seconds()))))
		http.Error(w, "too many requests (injected 429)", http.StatusTooManyRequests)
		return true
	case faultSlow:
		t := time.NewTimer(f.SlowDelay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return true
		}
	}
	return false
}
