package consumerbench_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
)

// consumerBin is a booking-consumer binary run by a benchmark: its process, its exit and its
// standard error.
type consumerBin struct {
	cmd    *exec.Cmd
	exited chan error
	stderr bytes.Buffer
}

// startConsumerBin starts bin run on topic into the database at dbURL, in its own group, with
// LOG_LEVEL=warn, no metrics server, no migrations and the extra args.
func startConsumerBin(b testing.TB, ctx context.Context, bin, dbURL, addr, topic string, args ...string) *consumerBin {
	b.Helper()
	p := &consumerBin{exited: make(chan error, 1)}
	p.cmd = exec.CommandContext(ctx, bin, "run", "--database-url", dbURL, "--kafka-bootstrap", addr,
		"--topic", topic, "--group", kafkatest.Name(b, "rss"), "--metrics-addr", "", "--no-migrate")
	p.cmd.Args = append(p.cmd.Args, args...)
	p.cmd.Env = append(os.Environ(), "LOG_LEVEL=warn")
	p.cmd.Stderr = &p.stderr
	if err := p.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	return p
}

// stop sends SIGTERM and fails b unless the binary exits cleanly within 30 s.
func (p *consumerBin) stop(b testing.TB) {
	b.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.exited:
		if err != nil {
			b.Fatalf("booking-consumer after SIGTERM: %v\n%s", err, tail(p.stderr.String()))
		}
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		b.Fatal("booking-consumer did not exit within 30s of SIGTERM")
	}
}
