package dashboard

// The pipeline page: ingest totals, dead letters, Kafka lag and the consumer's metrics.

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/store"
)

type pipelineData struct {
	Events     int64
	LastIngest string
	Dead       int64
	DeadRows   []deadRow
	Kafka      bool
	LagErr     string
	Lag        []kafkabus.PartitionLag
	TotalLag   int64
	Metrics    []metricRow
	MetricsErr string
}

type deadRow struct {
	ID                int64
	Position, Failed  string
	Attempts          int
	Error, Key, Value string
}

type metricRow struct{ Name, Labels, Value, Help string }

const newestDead = 10

func (h *Handler) pipeline(w http.ResponseWriter, r *http.Request) {
	if len(r.URL.Query()) > 0 {
		h.fail(w, r, http.StatusBadRequest, "the pipeline page takes no parameters")
		return
	}
	var d pipelineData
	var last *time.Time
	var dead []store.DeadLetter
	if !h.readPage(w, r, func(rd *store.Reader) error {
		var err error
		if d.Events, last, err = rd.IngestTotals(r.Context()); err != nil {
			return err
		}
		if d.Dead, err = rd.DeadCount(r.Context()); err != nil {
			return err
		}
		dead, err = rd.NewestDeadLetters(r.Context(), newestDead)
		return err
	}) {
		return
	}
	loc := h.cfg.Loc
	if last != nil {
		d.LastIngest = last.In(loc).Format("2006-01-02 15:04:05 MST")
	}
	for _, x := range dead {
		d.DeadRows = append(d.DeadRows, deadRow{ID: x.ID, Position: fmt.Sprintf("%s/%d@%d", x.Topic, x.Partition, x.Offset),
			Failed: x.LastFailedAt.In(loc).Format("2006-01-02 15:04:05"), Attempts: x.Attempts,
			Error: cli.Escape([]byte(x.Error), 300), Key: cli.Escape(x.Key, 120), Value: cli.Escape(x.Value, 300)})
	}
	if h.cfg.Lag != nil {
		d.Kafka = true
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		lag, err := h.cfg.Lag(ctx)
		cancel()
		if err != nil {
			d.LagErr = err.Error()
		}
		d.Lag = lag
		for _, l := range lag {
			d.TotalLag += max(l.Lag, 0)
		}
	}
	if h.cfg.Metrics != nil {
		var err error
		if d.Metrics, err = metricRows(h.cfg.Metrics); err != nil {
			d.MetricsErr = err.Error()
		}
	}
	h.render(w, r, http.StatusOK, "pipeline", "Pipeline", d)
}

// metricRows flattens the gathered metrics of the consumer's own families (and the process's
// basics) into rows a person can read.
func metricRows(g prometheus.Gatherer) ([]metricRow, error) {
	mfs, err := g.Gather()
	var out []metricRow
	for _, mf := range mfs {
		name := mf.GetName()
		if !strings.HasPrefix(name, "consumer_") && !strings.HasPrefix(name, "booking_") &&
			name != "process_resident_memory_bytes" && name != "go_goroutines" && name != "process_start_time_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			var v string
			switch {
			case m.GetCounter() != nil:
				v = strconv.FormatFloat(m.GetCounter().GetValue(), 'f', -1, 64)
			case m.GetGauge() != nil:
				v = strconv.FormatFloat(m.GetGauge().GetValue(), 'f', -1, 64)
			case m.GetHistogram() != nil:
				hg := m.GetHistogram()
				mean := 0.0
				if hg.GetSampleCount() > 0 {
					mean = hg.GetSampleSum() / float64(hg.GetSampleCount())
				}
				v = fmt.Sprintf("%d observations, mean %.4g", hg.GetSampleCount(), mean)
			default:
				continue
			}
			out = append(out, metricRow{Name: name, Labels: strings.Join(labels, ", "), Value: v, Help: mf.GetHelp()})
		}
	}
	return out, err
}
