package docs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// runOrder is the order the pages with runnable blocks run in, in one copy of the repository:
// docs/running.md builds bin/, which the others use. A page not listed runs after them.
var runOrder = []string{"docs/running.md", "docs/sites.md", "README.md"}

// excluded are the commands of runnable blocks that the test does not run, with the reason: make
// targets that run whole suites or serve until Ctrl-C. Each must still be in a runnable block (the
// test fails for an entry it did not meet, so the list cannot outlive the docs).
var excluded = map[string]string{
	"make test": "the whole suite, this test among it (CI runs it)",
	"make demo": "the whole pipeline for minutes, then the dashboard until Ctrl-C (make demo is the lead's run)",
}

// given is what the harness does for a page before its blocks run, standing in for the reader's
// own: README's walk starts from a request copied out of the browser, here the simulator's (docs/
// sites.md's first runnable block writes it) with the simulator serving.
var given = map[string][]string{
	"README.md": {"bin/crawler sim --addr 127.0.0.1:8089 &", "@docs/sites.md#1"},
}

// simAddr is the simulator's address as the docs write it; each page gets a free port instead.
const simAddr = "127.0.0.1:8089"

// TestRunnableCommands runs every command of the docs' runnable blocks (markedBlocks) as written,
// page by page, in a copy of the repository (so the reader's files, bin/ and .crawler-state land
// there), against the local stack and the simulator. The harness changes only this:
//   - 127.0.0.1:8089 becomes a free port of the page's own, in commands and files;
//   - after `eval "$(compose/dev/stack env)"`, DATABASE_URL names a database of the test's own;
//   - the environment starts without the project's variables (a new terminal), with STACK_DIR set
//     to the stack this test runs against, METRICS_ADDR and the demos' ports free, and an HTTP(S)
//     proxy that refuses, so nothing leaves the machine (a Telegram send fails at once);
//   - a command that serves until stopped (`crawler run`) is stopped with SIGTERM once its first
//     run is done (crawler_runs_total), and must then exit 0; a command ending in & runs in the
//     background until its page is done, and the addresses it names must answer first.
//
// Every other command must exit 0.
func TestRunnableCommands(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[string][]block{}
	var pages []string
	for _, page := range checkedPages(t) {
		body, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		if bs := markedBlocks(page, string(body)); len(bs) > 0 {
			blocks[page] = bs
			pages = append(pages, page)
		}
	}
	pages = ordered(pages)
	if len(pages) < len(runOrder) {
		t.Fatalf("runnable blocks in %v only; want at least %v", pages, runOrder)
	}

	_, dbURL := storetest.NewDBURL(t)
	ws := copyRepo(t, root)
	env := baseEnv(t, root)
	met := map[string]bool{}
	total, pagesRun := 0, 0
	failed := ""
	for _, page := range pages {
		t.Run(page, func(t *testing.T) {
			pagesRun++
			if failed != "" {
				t.Fatalf("not run: %s failed before it (the pages build on each other's files: bin/, request.txt)", failed)
			}
			defer func() {
				if t.Failed() {
					failed = page
				}
			}()
			p := &pageRun{t: t, ws: ws, env: env, dbURL: dbURL, sim: testkit.FreeAddr(t), state: filepath.Join(t.TempDir(), "state.sh")}
			defer p.stopBackground()
			for _, g := range given[page] {
				if ref, ok := strings.CutPrefix(g, "@"); ok {
					p.runBlock(givenBlock(t, blocks, ref), nil)
					continue
				}
				p.run(g)
			}
			for _, b := range blocks[page] {
				p.runBlock(b, met)
			}
			total += p.ran
			t.Logf("%s: %d command(s) run", page, p.ran)
		})
	}
	for cmd, why := range excluded {
		if pagesRun == len(pages) && !met[cmd] {
			t.Errorf("excluded %q (%s) is in no runnable block: drop it from the list", cmd, why)
		}
	}
	t.Logf("%d command(s) run; excluded: %v", total, excludedList())
}

func excludedList() []string {
	var out []string
	for cmd := range excluded {
		out = append(out, cmd)
	}
	return out
}

// ordered is pages in runOrder first, then the rest as they came.
func ordered(pages []string) []string {
	var out []string
	for _, p := range runOrder {
		for _, q := range pages {
			if p == q {
				out = append(out, p)
			}
		}
	}
	for _, q := range pages {
		if !contains(runOrder, q) {
			out = append(out, q)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// givenBlock is the block "page#n" (the n-th marked block of page, from 1).
func givenBlock(t *testing.T, blocks map[string][]block, ref string) block {
	t.Helper()
	page, n, _ := strings.Cut(ref, "#")
	i, err := strconv.Atoi(n)
	if err != nil || i < 1 || i > len(blocks[page]) {
		t.Fatalf("given %q: %s has %d marked block(s)", ref, page, len(blocks[page]))
	}
	return blocks[page][i-1]
}

// copyRepo copies the repository's files (not .git, .stack, bin/, tmp/) into a folder PostgreSQL's
// user can enter, as compose/dev/stack expects of a checkout.
func copyRepo(t *testing.T, root string) string {
	t.Helper()
	ws, err := os.MkdirTemp("", "golf-docs-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(ws) })
	if err := os.Chmod(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if rel == "." {
			return nil
		}
		name := d.Name()
		if d.IsDir() && (strings.HasPrefix(name, ".") && rel != ".ci" || rel == "bin" || rel == "tmp") {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		dst := filepath.Join(ws, rel)
		switch {
		case d.IsDir():
			return os.Mkdir(dst, 0o755)
		case info.Mode().IsRegular():
			return copyFile(path, dst, info.Mode().Perm())
		}
		return nil // sockets, links: a checkout has none the docs need
	})
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// projectVars are the variables of docs/running.md's table and the demos: a reader's new terminal
// has none of them.
var projectVars = regexp.MustCompile(`^(DATABASE_URL|TEST_DATABASE_URL|KAFKA_\w*|CRAWL\w*|WATCHES_FILE|NOTIFY_\w*|BATCH_MAX_BYTES|METRICS_ADDR|HTTP_ADDR|LOG_LEVEL|LOG_FORMAT|SIM_CLUB_\w*|TELEGRAM_\w*|DASHBOARD_\w*|ALERTS_DEMO_\w*|DEMO_\w*|PG_PORT|HTTPS?_PROXY|https?_proxy|NO_PROXY|no_proxy)=`)

func baseEnv(t *testing.T, root string) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		if !projectVars.MatchString(kv) {
			env = append(env, kv)
		}
	}
	stackDir := os.Getenv("STACK_DIR")
	if stackDir == "" {
		stackDir = filepath.Join(root, ".stack")
	}
	refused := "http://" + testkit.FreeAddr(t)
	port := func() string { _, p, _ := net.SplitHostPort(testkit.FreeAddr(t)); return p }
	return append(env,
		"STACK_DIR="+stackDir,
		"METRICS_ADDR="+testkit.FreeAddr(t),
		"HTTPS_PROXY="+refused, "HTTP_PROXY="+refused,
		"ALERTS_DEMO_SIM_PORT="+port(), "ALERTS_DEMO_HOOK_PORT="+port(), "ALERTS_DEMO_METRICS_PORT="+port(),
	)
}

// pageRun runs one page's commands in one shell state: each command is its own bash, which reads
// the variables the earlier ones left (set -a, then export -p into the state file).
type pageRun struct {
	t          *testing.T
	ws         string
	env        []string
	dbURL      string
	sim        string
	state      string
	ran        int
	background []*exec.Cmd
}

func (p *pageRun) runBlock(b block, met map[string]bool) {
	p.t.Helper()
	if b.file != "" {
		text := strings.ReplaceAll(b.text, simAddr, p.sim)
		if err := os.WriteFile(filepath.Join(p.ws, b.file), []byte(text), 0o644); err != nil {
			p.t.Fatal(err)
		}
		return
	}
	for _, cmd := range commands(b.text) {
		if key := excludedKey(cmd); key != "" {
			if met != nil {
				met[key] = true
			}
			p.t.Logf("%s:%d: not run (%s): %s", b.page, b.line, excluded[key], key)
			continue
		}
		p.t.Logf("%s:%d: %s", b.page, b.line, firstLine(cmd))
		p.run(cmd)
		if met != nil {
			p.ran++ // the page's own commands, not what is given
		}
	}
}

func excludedKey(cmd string) string {
	f := strings.Fields(cmd)
	if len(f) >= 2 {
		if _, ok := excluded[f[0]+" "+f[1]]; ok {
			return f[0] + " " + f[1]
		}
	}
	return ""
}

func firstLine(cmd string) string {
	l, _, _ := strings.Cut(cmd, "\n")
	return l
}

var (
	daemonRe = regexp.MustCompile(`^\s*bin/crawler run\b`)
	addrRe   = regexp.MustCompile(`127\.0\.0\.1:\d+`)
)

// commandTimeout bounds one command, so that a command that serves until stopped and is not known
// as such fails the test instead of hanging it.
const commandTimeout = 5 * time.Minute

func (p *pageRun) run(cmd string) {
	t := p.t
	t.Helper()
	text := strings.ReplaceAll(cmd, simAddr, p.sim)
	daemon := daemonRe.MatchString(text)
	body := text + "\n__rc=$?\n"
	if daemon {
		// In the background, so that the shell forwards the SIGTERM the test sends it and then
		// reports the command's own exit status.
		body = "trap 'kill -TERM $__pid 2>/dev/null' TERM\n{\nexec " + strings.TrimSpace(text) + "\n} &\n__pid=$!\nwait $__pid\nwait $__pid\n__rc=$?\n"
	}
	script := "set -a\n[ -f " + p.state + " ] && . " + p.state + "\n" + body +
		"export -p >" + p.state + ".new && mv " + p.state + ".new " + p.state + "\nexit $__rc\n"
	logPath := filepath.Join(t.TempDir(), "out.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	c := exec.Command("bash", "-c", script)
	c.Dir, c.Env, c.Stdout, c.Stderr = p.ws, p.env, logFile, logFile
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	output := func() string { b, _ := os.ReadFile(logPath); return testkit.Tail(string(b), 6000) }
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()

	if daemon {
		p.untilFirstRun(done, output)
		_ = c.Process.Signal(syscall.SIGTERM)
	}
	select {
	case err = <-done:
	case <-time.After(commandTimeout):
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		t.Fatalf("still running after %v (a command that serves until stopped needs daemonRe): %s\n%s", commandTimeout, text, output())
	}
	if err != nil {
		t.Fatalf("%s\nfailed: %v\n%s", text, err, output())
	}
	if strings.HasSuffix(strings.TrimSpace(text), "&") {
		p.background = append(p.background, c)
		for _, addr := range addrRe.FindAllString(text, -1) {
			testkit.WaitForf(t, time.Minute, func() string { return addr + " to answer (" + text + ")\n" + output() }, func() bool {
				conn, err := net.DialTimeout("tcp", addr, time.Second)
				if err == nil {
					conn.Close()
				}
				return err == nil
			})
		}
	}
	if strings.Contains(text, `eval "$(compose/dev/stack env)"`) {
		f, err := os.OpenFile(p.state, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, "export DATABASE_URL=%s\n", strconv.Quote(p.dbURL))
		f.Close()
	}
}

var runsRe = regexp.MustCompile(`(?m)^crawler_runs_total\{[^}]*\} ([0-9.e+]+)$`)

// untilFirstRun waits until crawler run has finished its first run, by its /metrics.
func (p *pageRun) untilFirstRun(done chan error, output func() string) {
	p.t.Helper()
	metrics := ""
	for _, kv := range p.env {
		if v, ok := strings.CutPrefix(kv, "METRICS_ADDR="); ok {
			metrics = "http://" + v + "/metrics"
		}
	}
	client := &http.Client{Timeout: 5 * time.Second}
	testkit.WaitForf(p.t, commandTimeout, func() string { return "the first run of crawler run\n" + output() }, func() bool {
		select {
		case err := <-done:
			done <- err
			p.t.Fatalf("crawler run exited before its first run was done: %v\n%s", err, output())
		default:
		}
		ctx, cancel := context.WithTimeout(p.t.Context(), 5*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, metrics, nil)
		resp, err := client.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return false
		}
		for _, m := range runsRe.FindAllStringSubmatch(string(body), -1) {
			if n, err := strconv.ParseFloat(m[1], 64); err == nil && n >= 1 {
				return true
			}
		}
		return false
	})
}

// stopBackground ends what the page left running in the background (its process groups).
func (p *pageRun) stopBackground() {
	for _, c := range p.background {
		if err := syscall.Kill(-c.Process.Pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
			p.t.Logf("stop %v: %v", c.Args, err)
		}
	}
}
