package dev_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestBenchRunsBenchmarksThatExist: every `bench ./pkg/ '^Name$' ...` line of compose/dev/bench
// names a benchmark defined in that package's tests. A benchmark that moved (BenchmarkNotifyLatency
// went from cmd/internal/notify to cmd/internal/alerts with the alert service) made `make bench`
// stop at "ran no benchmark", after minutes of the benchmarks before it.
func TestBenchRunsBenchmarksThatExist(t *testing.T) {
	script, err := os.ReadFile("bench")
	if err != nil {
		t.Fatal(err)
	}
	lines := regexp.MustCompile(`(?m)^\s*bench (\./\S+) '\^(\w+)\$'`).FindAllStringSubmatch(string(script), -1)
	if len(lines) < 10 {
		t.Fatalf("%d bench lines found in compose/dev/bench: the pattern no longer reads it", len(lines))
	}
	for _, l := range lines {
		pkg, name := l[1], l[2]
		files, _ := filepath.Glob(filepath.Join("..", "..", pkg, "*_test.go"))
		found := false
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), "func "+name+"(b *testing.B)") {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("compose/dev/bench runs %s in %s, which has no such benchmark", name, pkg)
		}
	}
}
