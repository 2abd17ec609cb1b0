package kafkatest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestEveryKafkaClientHasATransportOfItsOwn: a kafka.Writer or kafka.Client written without a
// Transport uses kafka-go's DefaultTransport, which every client in the process shares. It serves
// metadata from a cache refreshed every 6 s, so a topic created after the cache was filled (every
// test's topic, after the first test in the package) is answered "Unknown Topic Or Partition" with
// no round trip to the broker, until the next refresh. A retry loop shorter than that refresh
// fails whenever the machine is loaded: TestDeadRetryWhileTheConsumerStoresTheSameEvents did in
// CI on b93338f ("publish (attempt 50): [3] Unknown Topic Or Partition" after 5 s of retries).
// This walks the module's Go files and names every such literal.
func TestEveryKafkaClientHasATransportOfItsOwn(t *testing.T) {
	root := moduleRoot(t)
	var bad []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			sel, ok := lit.Type.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "Writer" && sel.Sel.Name != "Client") {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "kafka" {
				return true
			}
			for _, elt := range lit.Elts {
				if kv, ok := elt.(*ast.KeyValueExpr); ok {
					if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Transport" {
						return true
					}
				}
			}
			rel, _ := filepath.Rel(root, path)
			bad = append(bad, rel+":"+strconv.Itoa(fset.Position(lit.Pos()).Line)+": kafka."+sel.Sel.Name+" without a Transport")
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) > 0 {
		t.Errorf("clients on kafka-go's shared DefaultTransport (a fresh topic reads as unknown for up to 6 s): give each "+
			"a &kafka.Transport{...} of its own, or use kafkatest.Produce:\n%s", strings.Join(bad, "\n"))
	}
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
