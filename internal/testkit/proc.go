package testkit

import (
	"net"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// Recv waits up to timeout for the one value a goroutine sends on ch when it ends (the error of
// a Run, a Wait) and returns it; it fails t with "WHAT did not return" once timeout has passed.
func Recv[T any](t testing.TB, ch <-chan T, timeout time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(timeout):
		t.Fatalf("%s did not return within %v", what, timeout)
		panic("unreachable")
	}
}

// NoErr is Recv for an error channel: the error received must be nil.
func NoErr(t testing.TB, ch <-chan error, timeout time.Duration, what string) {
	t.Helper()
	if err := Recv(t, ch, timeout, what); err != nil {
		t.Errorf("%s: %v", what, err)
	}
}

// FreeAddr is a loopback address no one listens on right now (for a child's --metrics-addr).
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Proc is a child process a test started: its stderr in Logs, its exit in Exited (once), killed
// when the test ends if it is still running.
type Proc struct {
	Cmd    *exec.Cmd
	Logs   *SyncBuffer
	Exited chan error
}

// Start runs bin with args; env is added to the test's environment.
func Start(t testing.TB, bin string, env []string, args ...string) *Proc {
	t.Helper()
	return StartCmd(t, exec.Command(bin, args...), env)
}

// StartCmd is Start for a command the caller prepared (its Stdout, its Dir): env is added to the
// test's environment, its stderr goes to Logs, and it is killed when the test ends if it is still
// running. Start(t, bin, env, args...) is StartCmd(t, exec.Command(bin, args...), env).
func StartCmd(t testing.TB, cmd *exec.Cmd, env []string) *Proc {
	t.Helper()
	p := &Proc{Cmd: cmd, Logs: &SyncBuffer{}, Exited: make(chan error, 1)}
	p.Cmd.Env = append(os.Environ(), env...)
	p.Cmd.Stderr = p.Logs
	if err := p.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.Exited <- p.Cmd.Wait() }()
	t.Cleanup(func() { _ = p.Cmd.Process.Kill() })
	return p
}

// Alive fails t if the process has exited (saying when, with its last logs).
func (p *Proc) Alive(t testing.TB, when string) {
	t.Helper()
	select {
	case err := <-p.Exited:
		p.Exited <- err
		t.Fatalf("%s exited %s: %v\n%s", p.Cmd.Path, when, err, Tail(p.Logs.String(), 4000))
	default:
	}
}

// Wait returns the exit error, failing t (with the last logs) if it has not exited by timeout.
func (p *Proc) Wait(t testing.TB, timeout time.Duration) error {
	t.Helper()
	select {
	case err := <-p.Exited:
		p.Exited <- err
		return err
	case <-time.After(timeout):
		t.Fatalf("%s did not exit within %v\n%s", p.Cmd.Path, timeout, Tail(p.Logs.String(), 4000))
		return nil
	}
}

// Stop sends SIGTERM and wants exit status 0 within timeout.
func (p *Proc) Stop(t testing.TB, timeout time.Duration) {
	t.Helper()
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	if err := p.Wait(t, timeout); err != nil {
		t.Errorf("%s after SIGTERM: %v\n%s", p.Cmd.Path, err, Tail(p.Logs.String(), 3000))
	}
}
