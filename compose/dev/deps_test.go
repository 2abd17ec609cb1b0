package dev_test

// Tests of compose/dev/deps, the install step of make test, make demo and .ci/run. It runs on a
// PATH of its own where every tool is a stub: `id` says who runs it, and `apt-get` records its
// calls and "installs" a package by writing that package's stubs (so a second run finds them).

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// debStubs are the tools each Debian package puts on the PATH (postgresql-15: initdb in PG_BINDIR).
var debStubs = map[string]string{
	"postgresql-client-15":    "psql",
	"openjdk-17-jre-headless": "java",
	"maven":                   "mvn",
	"python3-venv":            "python3",
	"chromium":                "chromium",
	"fonts-nanum":             "fc-list",
	"make":                    "make",
}

type depsBox struct {
	t               *testing.T
	bin, pgbin, log string
}

// newDepsBox is a PATH with the stubs of the given packages (and Go), run as user uid.
func newDepsBox(t *testing.T, uid int, installed ...string) *depsBox {
	t.Helper()
	dir := t.TempDir()
	b := &depsBox{t: t, bin: filepath.Join(dir, "bin"), pgbin: filepath.Join(dir, "pg"), log: filepath.Join(dir, "apt.log")}
	for _, d := range []string{b.bin, b.pgbin} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tool := range []string{"grep", "sed", "chmod"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(b.bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	b.stub("id", fmt.Sprintf("echo %d", uid))
	b.stub("go", "exit 0")
	var cases strings.Builder
	for pkg, tool := range debStubs {
		body := "exit 0"
		if tool == "fc-list" {
			body = "echo /usr/share/fonts/truetype/nanum/NanumGothic.ttf: NanumGothic"
		}
		p := filepath.Join(b.bin, tool)
		fmt.Fprintf(&cases, "    %s) printf '#!/bin/bash\\n%s\\n' >%s; chmod +x %s ;;\n", pkg, body, p, p)
	}
	initdb := filepath.Join(b.pgbin, "initdb")
	fmt.Fprintf(&cases, "    postgresql-15) printf '#!/bin/bash\\n' >%s; chmod +x %s ;;\n", initdb, initdb)
	b.stub("apt-get", `[ -n "$QUIET_INSTALL" ] || echo "$*" >>`+b.log+`
[ "$1" = install ] || exit 0
for p in "$@"; do
  case "$p" in
`+cases.String()+`  esac
done`)
	if len(installed) > 0 {
		cmd := exec.Command(filepath.Join(b.bin, "apt-get"), append([]string{"install"}, installed...)...)
		cmd.Env = []string{"PATH=" + b.bin, "QUIET_INSTALL=1"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("stage %v: %v\n%s", installed, err, out)
		}
	}
	return b
}

func (b *depsBox) stub(name, body string) {
	b.t.Helper()
	if err := os.WriteFile(filepath.Join(b.bin, name), []byte("#!/bin/bash\n"+body+"\n"), 0o755); err != nil {
		b.t.Fatal(err)
	}
}

// run runs compose/dev/deps SET on the box's PATH: its output, and whether it exited 0.
func (b *depsBox) run(set string) (string, bool) {
	b.t.Helper()
	cmd := exec.Command("/bin/bash", "deps", set)
	cmd.Env = []string{"PATH=" + b.bin, "PG_BINDIR=" + b.pgbin}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		b.t.Fatalf("deps %s: %v\n%s", set, err, out)
	}
	return string(out), err == nil
}

// aptCalls are apt-get's argument lists, one a call.
func (b *depsBox) aptCalls() []string {
	b.t.Helper()
	data, err := os.ReadFile(b.log)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		b.t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// As root on a bare machine, every missing package of the set is installed in one apt-get install
// after one update; a second run finds everything and does nothing.
func TestDepsInstallsWhatIsMissingAsRoot(t *testing.T) {
	for set, want := range map[string]string{
		"stack": "postgresql-15 postgresql-client-15 openjdk-17-jre-headless maven",
		"test":  "postgresql-15 postgresql-client-15 openjdk-17-jre-headless maven python3-venv chromium fonts-nanum",
		"ci":    "postgresql-15 postgresql-client-15 openjdk-17-jre-headless maven python3-venv chromium fonts-nanum make",
	} {
		t.Run(set, func(t *testing.T) {
			b := newDepsBox(t, 0)
			out, ok := b.run(set)
			if !ok {
				t.Fatalf("deps %s exited non-zero:\n%s", set, out)
			}
			if got := b.aptCalls(); !slices.Equal(got, []string{"update -qq", "install -y -qq --no-install-recommends " + want}) {
				t.Fatalf("apt-get calls:\n%s\nwant update, then install %s", strings.Join(got, "\n"), want)
			}
			if out, ok := b.run(set); !ok || out != "" || len(b.aptCalls()) != 2 {
				t.Fatalf("second run: ok %v, output %q, apt-get calls %q: want nothing done", ok, out, b.aptCalls())
			}
		})
	}
}

// Not root, it installs nothing and says in one line what is missing and what to run.
func TestDepsTellsANonRootUserTheOneCommand(t *testing.T) {
	b := newDepsBox(t, 1000, "postgresql-15", "postgresql-client-15", "openjdk-17-jre-headless", "maven", "python3-venv")
	out, ok := b.run("test")
	want := "deps: missing chromium fonts-nanum; install them as root: apt-get install -y --no-install-recommends chromium fonts-nanum\n"
	if ok || out != want {
		t.Fatalf("deps test: ok %v, output %q; want exit 1 and %q", ok, out, want)
	}
	if calls := b.aptCalls(); calls != nil {
		t.Fatalf("apt-get called as non-root: %q", calls)
	}
	// The stack's set does not need the browser: nothing to say.
	if out, ok := b.run("stack"); !ok || out != "" {
		t.Fatalf("deps stack: ok %v, output %q; want exit 0 and nothing", ok, out)
	}
}

// An apt-get that does not provide a tool is reported, not taken for success.
func TestDepsReportsWhatAptGetDidNotInstall(t *testing.T) {
	b := newDepsBox(t, 0)
	b.stub("apt-get", "exit 0") // installs nothing
	out, ok := b.run("stack")
	if ok || !strings.Contains(out, "deps: still missing after apt-get install: postgresql-15 postgresql-client-15 openjdk-17-jre-headless maven") {
		t.Fatalf("deps stack: ok %v, output %q; want exit 1 naming what is still missing", ok, out)
	}
}
