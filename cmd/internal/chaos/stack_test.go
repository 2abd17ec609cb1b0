//go:build chaos

package chaos_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// privateStack is the chaos suite's own PostgreSQL and Kafka (compose/dev/chaos starts them).
type privateStack struct {
	root, dir               string
	pgPort, kPort, kCtlPort string
	bootstrap, adminURL     string
}

// stack returns the private stack, failing when the suite is not run by compose/dev/chaos: the
// tests stop and restart servers, so they must never point at the shared dev stack.
func stack(t testing.TB) privateStack {
	t.Helper()
	s := privateStack{
		root: os.Getenv("CHAOS_ROOT"), dir: os.Getenv("CHAOS_STACK_DIR"),
		pgPort: os.Getenv("CHAOS_PG_PORT"), kPort: os.Getenv("CHAOS_KAFKA_PORT"),
		kCtlPort:  os.Getenv("CHAOS_KAFKA_CONTROLLER_PORT"),
		bootstrap: os.Getenv("TEST_KAFKA_BOOTSTRAP"), adminURL: os.Getenv("TEST_DATABASE_URL"),
	}
	if s.root == "" || s.dir == "" || s.pgPort == "" || s.kPort == "" || s.kCtlPort == "" || s.bootstrap == "" || s.adminURL == "" {
		t.Fatal("the chaos suite runs against its private stack: use compose/dev/chaos (it sets CHAOS_* and TEST_* variables)")
	}
	if s.pgPort == "55432" || s.kPort == "19092" || !strings.Contains(s.bootstrap, s.kPort) || !strings.Contains(s.adminURL, ":"+s.pgPort+"/") {
		t.Fatalf("refusing to restart the shared dev stack: CHAOS ports %s/%s, TEST_KAFKA_BOOTSTRAP %s", s.pgPort, s.kPort, s.bootstrap)
	}
	return s
}

func (s privateStack) env() []string {
	return append(os.Environ(), "STACK_DIR="+s.dir, "PG_PORT="+s.pgPort, "KAFKA_PORT="+s.kPort,
		"KAFKA_CONTROLLER_PORT="+s.kCtlPort)
}

// up starts whatever of the private stack is down (compose/dev/stack up is idempotent).
func (s privateStack) up(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(s.root, "compose/dev/stack"), "up")
	cmd.Env = s.env()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("private stack up: %v\n%s", err, out)
	}
}

// stopPostgres stops the private PostgreSQL with pg_ctl (mode fast or immediate).
func (s privateStack) stopPostgres(t testing.TB, mode string) {
	t.Helper()
	bin := os.Getenv("PG_BINDIR")
	if bin == "" {
		bin = "/usr/lib/postgresql/15/bin"
	}
	args := []string{filepath.Join(bin, "pg_ctl"), "-D", filepath.Join(s.dir, "postgres/data"), "-m", mode, "-t", "60", "-w", "stop"}
	if os.Geteuid() == 0 {
		args = append([]string{"runuser", "-u", "postgres", "--"}, args...)
	}
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("stop private postgres (%s): %v\n%s", mode, err, out)
	}
}

// stopKafka signals the private broker (the pid compose/dev/stack recorded, checked to be a Kafka
// broker reading the private stack's config) and waits up to a minute for it to exit.
func (s privateStack) stopKafka(t testing.TB, sig syscall.Signal) {
	t.Helper()
	pidFile := filepath.Join(s.dir, "kafka/kafka.pid")
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("private kafka pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("private kafka pid %q: %v", b, err)
	}
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if !bytes.Contains(cmdline, []byte("kafka.Kafka")) || !bytes.Contains(cmdline, []byte(s.dir)) {
		t.Fatalf("pid %d is not the private broker (cmdline %q)", pid, cmdline)
	}
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatalf("signal private kafka %d: %v", pid, err)
	}
	deadline := time.Now().Add(time.Minute)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Logf("private kafka ignored %v for 1 minute; killed", sig)
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	_ = os.Remove(pidFile)
}

// builds builds each command the suite runs as a binary (cmd/NAME) once per test binary, and
// NAME.test, cmd/NAME's test binary (`go test -c`), whose TestMain can run it as the command with
// fault seams set (cmd/crawler/fillchild_test.go).
var builds = map[string]func() (string, error){
	"booking-consumer": sync.OnceValues(func() (string, error) { return build("booking-consumer", "build") }),
	"crawler":          sync.OnceValues(func() (string, error) { return build("crawler", "build") }),
	"crawler.test":     sync.OnceValues(func() (string, error) { return build("crawler", "test", "-c") }),
}

// build runs `go <how...> -o BIN ./cmd/name` in CHAOS_ROOT and returns BIN.
func build(name string, how ...string) (string, error) {
	dir, err := os.MkdirTemp("", "chaos-"+name+"-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, name)
	cmd := exec.Command("go", append(how, "-o", bin, "./cmd/"+name)...)
	cmd.Dir = os.Getenv("CHAOS_ROOT")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %s ./cmd/%s: %v\n%s", strings.Join(how, " "), name, err, out)
	}
	return bin, nil
}

// builtBinary returns the path of cmd/NAME (or cmd/NAME's test binary: NAME.test) built (once)
// from the checkout under test.
func builtBinary(t testing.TB, name string) string {
	t.Helper()
	bin, err := builds[name]()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}
