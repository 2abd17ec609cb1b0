package kafkatest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/internal/testkit"
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
	root := testkit.ModuleRoot(t)
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

// TestHelpersLeaveNothingRunning: a poll of the committed offsets, or a Produce, leaves no
// goroutine behind. 8d60911 gave CommittedOffsets a Transport per call and never closed it, so
// every call left its connections and the transport's metadata loop (a refresh every 6 s, for the
// rest of the process) running: the consumer benchmark polls every 10 ms, and the next `make
// bench` measured the booking-consumer under a CPU hog at 1.03x the expert (1.12x the run
// before). Produce had left 3 goroutines a call since it got a Transport of its own: kafka-go's
// Writer.Close leaves a transport it was given running.
func TestHelpersLeaveNothingRunning(t *testing.T) {
	addr := Bootstrap(t)
	topic := Topic(t, addr, 3)
	group := Name(t, "g")
	poll := func() {
		if _, err := CommittedOffsets(t.Context(), addr, group, topic, 3); err != nil {
			t.Fatal(err)
		}
	}
	poll() // the first call may start what every later call shares
	before := runtime.NumGoroutine()
	const polls = 30
	for range polls {
		poll()
	}
	time.Sleep(100 * time.Millisecond) // what a call closed has ended
	if after := runtime.NumGoroutine(); after-before >= polls/2 {
		t.Errorf("%d polls of CommittedOffsets left %d goroutines running (%d before, %d after)", polls, after-before, before, after)
	}

	before = runtime.NumGoroutine()
	const produces = 10
	for i := range produces {
		Produce(t, addr, topic, []kafka.Message{{Key: []byte("k"), Value: []byte{byte(i)}}})
	}
	time.Sleep(100 * time.Millisecond)
	if after := runtime.NumGoroutine(); after-before >= produces/2 {
		t.Errorf("%d calls of Produce left %d goroutines running (%d before, %d after)", produces, after-before, before, after)
	}
}
