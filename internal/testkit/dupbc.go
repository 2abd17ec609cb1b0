package testkit

import (
	"os"
	"os/exec"
	"testing"
)

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
