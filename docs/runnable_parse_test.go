package docs

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// The markers of a fenced block that TestRunnableCommands reads (CONTRIBUTING.md, "Commands in the
// docs"): the info string "sh runnable" marks commands to run as written, one after the other in
// one shell per page; "LANG file=NAME" marks the content of a file the reader writes (NAME, written
// before the commands that follow it run). Every other block is text.
const runnableMarker = "runnable"

// block is a fenced block of a page with one of the markers.
type block struct {
	page string
	line int    // the fence's line, 1-based
	file string // file=NAME; "" for commands
	text string // the content, the fence's indentation removed
}

var fenceRe = regexp.MustCompile("^( *)(```+)(.*)$")

// markedBlocks are the page's fenced blocks marked runnable or file=NAME, in order.
func markedBlocks(page, body string) []block {
	var out []block
	lines := strings.Split(body, "\n")
	for i := 0; i < len(lines); i++ {
		m := fenceRe.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		indent, fence, info := len(m[1]), m[2], strings.Fields(m[3])
		var content []string
		j := i + 1
		for ; j < len(lines); j++ {
			if c := fenceRe.FindStringSubmatch(lines[j]); c != nil && c[2] == fence && strings.TrimSpace(c[3]) == "" {
				break
			}
			l := lines[j]
			l = l[min(indent, len(l)-len(strings.TrimLeft(l, " "))):]
			content = append(content, l)
		}
		b := block{page: page, line: i + 1, text: strings.Join(content, "\n") + "\n"}
		marked := false
		for _, w := range info[min(1, len(info)):] {
			switch {
			case w == runnableMarker:
				marked = true
			case strings.HasPrefix(w, "file="):
				b.file, marked = strings.TrimPrefix(w, "file="), true
			}
		}
		if marked {
			out = append(out, b)
		}
		i = j
	}
	return out
}

var heredocRe = regexp.MustCompile(`<<-?\s*['"]?([A-Za-z_][A-Za-z0-9_]*)['"]?`)

// commands splits a runnable block into its commands: a line, with the lines it continues by a
// trailing backslash and, for a here-document, the lines up to its terminator. Blank lines and
// comment lines are no command.
func commands(text string) []string {
	var out []string
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		cmd := []string{lines[i]}
		for strings.HasSuffix(lines[i], `\`) && i+1 < len(lines) && !heredocRe.MatchString(strings.Join(cmd, "\n")) {
			i++
			cmd = append(cmd, lines[i])
		}
		if m := heredocRe.FindStringSubmatch(strings.Join(cmd, "\n")); m != nil {
			for i+1 < len(lines) {
				i++
				cmd = append(cmd, lines[i])
				if strings.TrimSpace(lines[i]) == m[1] {
					break
				}
			}
		}
		out = append(out, strings.Join(cmd, "\n"))
	}
	return out
}

func TestMarkedBlocksAndCommands(t *testing.T) {
	page := "# P\n\n```sh\nnot run\n```\n\n1. Step:\n\n   ```sh runnable\n   a=1   # set\n   # a comment\n\n   echo \"$a\" \\\n     two\n   cat > f <<EOF\n   x \\\n   y\n   EOF\n   ```\n\n   ```yaml file=w.yaml\n   k: v\n   ```\n"
	got := markedBlocks("p.md", page)
	want := []block{
		{page: "p.md", line: 9, text: "a=1   # set\n# a comment\n\necho \"$a\" \\\n  two\ncat > f <<EOF\nx \\\ny\nEOF\n"},
		{page: "p.md", line: 21, file: "w.yaml", text: "k: v\n"},
	}
	if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
		t.Fatalf("markedBlocks:\n got %#v\nwant %#v", got, want)
	}
	cmds := commands(got[0].text)
	wantCmds := []string{"a=1   # set", "echo \"$a\" \\\n  two", "cat > f <<EOF\nx \\\ny\nEOF"}
	if fmt.Sprintf("%q", cmds) != fmt.Sprintf("%q", wantCmds) {
		t.Fatalf("commands:\n got %q\nwant %q", cmds, wantCmds)
	}
}
