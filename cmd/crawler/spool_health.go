package main

import (
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/golfcrawler/golf-crawler/events/spool"
)

// spoolFailing is what the Kafka sender tells /healthz: why its calls fail, and since when.
type spoolFailing interface {
	Failing() (cause string, since time.Time)
}

// kafkaCheck is /healthz's checks.kafka (with Kafka) and checks.spool: the spool's unsent part,
// how old its oldest event is and why it is not sent. The age comes from the spool's records, so
// a restart does not clear it.
type kafkaCheck struct {
	Unsent       int        `json:"unsent"`
	OldestUnsent *time.Time `json:"oldest_unsent,omitempty"`
	SpoolBytes   int64      `json:"spool_bytes"`
	Cause        string     `json:"cause,omitempty"`
	FailingSince *time.Time `json:"failing_since,omitempty"`
	DroppedFull  int64      `json:"dropped_spool_full,omitempty"`
	Damaged      int        `json:"damaged_records,omitempty"`
	LeftBehind   int        `json:"left_behind_events,omitempty"`
	DiskFull     string     `json:"disk_full,omitempty"`
}

// watchSpool exports the spool on /metrics and /healthz. pub is the Kafka sender (nil: no
// Kafka, then only checks.spool's disk full is reported); alarm is checks.kafka's bound.
func (m *crawlerMetrics) watchSpool(sp *spool.Spool, pub spoolFailing, alarm time.Duration) {
	gauge := func(name, help string, f func(spool.Stats) float64) {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help},
			func() float64 { return f(sp.Stats()) }))
	}
	gauge("crawler_spool_bytes", "Bytes of <state-dir>/spool's segments on disk.", func(s spool.Stats) float64 { return float64(s.Bytes) })
	gauge("crawler_spool_unsent_events", "Events in the spool not yet acknowledged by Kafka.", func(s spool.Stats) float64 { return float64(s.Unsent) })
	gauge("crawler_spool_oldest_unsent_seconds", "Age of the oldest event in the spool not yet acknowledged by Kafka (0: none).",
		func(s spool.Stats) float64 {
			if s.OldestUnsent.IsZero() {
				return 0
			}
			return m.now().Sub(s.OldestUnsent).Seconds()
		})
	gauge("crawler_spool_damaged_records", "Damaged spool records skipped at start-up (a batch record among them is not sent; see the log).",
		func(s spool.Stats) float64 { return float64(s.Damaged) })
	gauge("crawler_spool_left_behind_events", "Events of batches whose commit or abort damage took, written to spool/left-behind-*-undecided.jsonl at start-up and not sent.",
		func(s spool.Stats) float64 { return float64(s.LeftBehind) })
	m.dropped.mu.Lock()
	m.dropped.spool = sp
	m.dropped.mu.Unlock()
	check := func() (any, []string) {
		st := sp.Stats()
		v := kafkaCheck{Unsent: st.Unsent, SpoolBytes: st.Bytes, DroppedFull: st.DroppedFull, Damaged: st.Damaged, LeftBehind: st.LeftBehind}
		var bad []string
		if st.DiskFull {
			v.DiskFull = st.LastErr.Error()
			bad = append(bad, "spool: disk full on the state dir: site crawls fail before their save until space returns")
		}
		if pub == nil {
			return v, bad
		}
		if !st.OldestUnsent.IsZero() {
			t := st.OldestUnsent
			v.OldestUnsent = &t
		}
		cause, since := pub.Failing()
		if cause != "" {
			v.Cause, v.FailingSince = cause, &since
		}
		if age := m.now().Sub(st.OldestUnsent); !st.OldestUnsent.IsZero() && age > alarm {
			why := cause
			if why == "" {
				why = "sending (catching up)"
			}
			bad = append(bad, fmt.Sprintf("kafka: the oldest unsent event is %s old (%d unsent, bound %s): %s",
				roundAge(age), st.Unsent, alarm, why))
		}
		return v, bad
	}
	name := "spool"
	if pub != nil {
		name = "kafka"
	}
	m.health.AddHealthCheck(name, check)
}

// droppedCounter is crawler_publish_dropped_total{reason}: the spool's drops, read from the spool
// at each scrape (reason spool_full, the one reason: the publisher has no queue to drop from).
type droppedCounter struct {
	vec *prometheus.CounterVec

	mu    sync.Mutex
	spool *spool.Spool
	seen  int64
}

func newDroppedCounter() *droppedCounter {
	return &droppedCounter{vec: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "crawler_publish_dropped_total",
		Help: "Booking events never sent, by reason: spool_full (the spool at --spool-max-bytes: the newest are dropped, never the crawl)."},
		[]string{"reason"})}
}

func (d *droppedCounter) Describe(ch chan<- *prometheus.Desc) { d.vec.Describe(ch) }

func (d *droppedCounter) Collect(ch chan<- prometheus.Metric) {
	d.mu.Lock()
	if d.spool != nil {
		n := d.spool.Stats().DroppedFull
		d.vec.WithLabelValues("spool_full").Add(float64(n - d.seen))
		d.seen = n
	}
	d.mu.Unlock()
	d.vec.Collect(ch)
}

func roundAge(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}
