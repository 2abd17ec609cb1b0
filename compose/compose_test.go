// Package compose holds the Docker compose files for users who have Docker (compose/kafka, the
// three-node Kafka cluster; compose/app, the application on kafka-net) and the local stack without
// Docker (compose/dev). Its test keeps the compose files true: they follow the Compose
// Specification, and every command, flag, environment variable, port and file they name exists in
// the binaries and the tree.
package compose_test

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

var composeFiles = []string{"kafka/compose.yaml", "app/compose.yaml"}

// load reads a compose file as JSON values (anchors and merge keys resolved, as compose does).
func load(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return testkit.YAMLDoc(t, b).(map[string]any)
}

// TestComposeFilesFollowTheSpec validates each compose file against the Compose Specification's
// JSON Schema (testdata/compose-spec, vendored with its licence).
func TestComposeFilesFollowTheSpec(t *testing.T) {
	sch := testkit.JSONSchema(t, "testdata/compose-spec/compose-spec.json", "compose_spec.json")
	for _, path := range composeFiles {
		if err := sch.Validate(load(t, path)); err != nil {
			t.Errorf("%s does not follow the Compose Specification: %v", path, err)
		}
	}
	// The schema is no rubber stamp: a misspelt key of a service fails it.
	bad := load(t, "app/compose.yaml")
	svc := bad["services"].(map[string]any)["crawler"].(map[string]any)
	svc["enviroment"] = svc["environment"]
	if err := sch.Validate(bad); err == nil {
		t.Error("a service with the key enviroment passed the schema")
	}
}

// binaries builds crawler and booking-consumer once for the --help checks.
var binaries = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "compose-bin-")
	if err != nil {
		return "", err
	}
	out, err := exec.Command("go", "build", "-o", dir+string(os.PathSeparator), "../cmd/crawler", "../cmd/booking-consumer").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return dir, nil
})

// help is `bin args... --help`'s output.
func help(t *testing.T, bin string, args ...string) string {
	t.Helper()
	dir, err := binaries()
	if err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command(filepath.Join(dir, bin), append(args, "--help")...).CombinedOutput() // --help may exit 0 or 2
	if !strings.Contains(string(out), "Usage") {
		t.Fatalf("%s %s --help printed no usage:\n%s", bin, strings.Join(args, " "), out)
	}
	return string(out)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if dir, err := binaries(); err == nil {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

func services(doc map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for name, s := range doc["services"].(map[string]any) {
		out[name] = s.(map[string]any)
	}
	return out
}

func strs(v any) []string {
	var out []string
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			out = append(out, fmt.Sprint(e))
		}
	case string:
		out = append(out, x)
	}
	return out
}

func env(s map[string]any) map[string]string {
	out := map[string]string{}
	if m, ok := s["environment"].(map[string]any); ok {
		for k, v := range m {
			out[k] = fmt.Sprint(v)
		}
	}
	return out
}

// published is a service's ports as (host address, container port).
func published(t *testing.T, s map[string]any) [][2]string {
	t.Helper()
	var out [][2]string
	for _, p := range strs(s["ports"]) {
		i := strings.LastIndex(p, ":")
		if i < 0 {
			t.Fatalf("port %q: want HOST_IP:HOST_PORT:CONTAINER_PORT", p)
		}
		out = append(out, [2]string{p[:i], p[i+1:]})
	}
	return out
}

func portOf(t *testing.T, addr string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("address %q: %v", addr, err)
	}
	return p
}

var (
	envNameRe = regexp.MustCompile(`\$\{([A-Z_][A-Z0-9_]*)`)
	subRe     = regexp.MustCompile(`(?m)^  (crawler|booking-consumer) (?:\[)?([a-z-]+)`)
)

// TestAppComposeNamesWhatExists checks compose/app/compose.yaml against the tree and the binaries:
// the build's files, each built service's subcommand, flags and environment variables (in its
// --help), the ports it publishes (those it listens on), its healthcheck, the files it mounts, and
// the database and Kafka it names (a service here, the nodes of compose/kafka/compose.yaml).
func TestAppComposeNamesWhatExists(t *testing.T) {
	app := load(t, "app/compose.yaml")
	kafka := load(t, "kafka/compose.yaml")
	dockerfile, err := os.ReadFile("app/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	kafkaHosts := map[string]string{} // hostname -> its PLAINTEXT port
	for name, s := range services(kafka) {
		if h, ok := s["hostname"].(string); ok {
			for _, l := range strings.Split(env(s)["KAFKA_LISTENERS"], ",") {
				if p, ok := strings.CutPrefix(l, "PLAINTEXT://:"); ok {
					kafkaHosts[h] = p
				}
			}
			if kafkaHosts[h] == "" {
				t.Errorf("kafka/compose.yaml %s: no PLAINTEXT listener in KAFKA_LISTENERS", name)
			}
		}
	}
	if len(kafkaHosts) != 3 {
		t.Fatalf("kafka/compose.yaml: %d broker hostnames, want 3", len(kafkaHosts))
	}
	topic := ""
	for _, c := range strs(services(kafka)["kafka-init"]["command"]) {
		if m := regexp.MustCompile(`--topic (\S+)`).FindStringSubmatch(c); m != nil {
			topic = m[1]
		}
	}

	for name, s := range services(app) {
		t.Run(name, func(t *testing.T) {
			build, built := s["build"].(map[string]any)
			if !built {
				if name != "postgres" {
					t.Fatalf("service %s is neither built here nor postgres", name)
				}
				return
			}
			// The build: its context and Dockerfile exist, and CMD names a command of the module.
			ctx := filepath.Join("app", build["context"].(string))
			if _, err := os.Stat(filepath.Join(ctx, build["dockerfile"].(string))); err != nil {
				t.Errorf("build: %v", err)
			}
			bin := build["args"].(map[string]any)["CMD"].(string)
			if _, err := os.Stat(filepath.Join(ctx, "cmd", bin)); err != nil {
				t.Fatalf("build arg CMD=%s: %v", bin, err)
			}
			top := help(t, bin)
			subs := map[string]bool{}
			for _, m := range subRe.FindAllStringSubmatch(top, -1) {
				subs[m[2]] = true
			}
			command := strs(s["command"])
			if len(command) == 0 || !subs[command[0]] {
				t.Fatalf("command %q: not a subcommand of %s (--help lists %v)", command, bin, subs)
			}
			sub := help(t, bin, command[0])
			listens := map[string]bool{}
			for i, arg := range command[1:] {
				if !strings.HasPrefix(arg, "--") {
					continue
				}
				flag := strings.TrimPrefix(arg, "--")
				if !strings.Contains(sub, "-"+flag+" ") {
					t.Errorf("command %q: %s %s --help has no flag --%s", command, bin, command[0], flag)
				}
				if strings.HasSuffix(flag, "addr") && i+2 < len(command) {
					listens[portOf(t, command[i+2])] = true
				}
			}
			// Each variable is one the command reads: its --help names it, or the sites file it
			// mounts names it as a login's credentials. A ${VAR} it interpolates is one of those.
			reads := top + sub + strings.Join(siteCredentials(t, s), " ")
			for k, v := range env(s) {
				if !strings.Contains(reads, k) {
					t.Errorf("environment %s: neither %s --help nor %s %s --help names it, nor the sites file it mounts", k, bin, bin, command[0])
				}
				if strings.HasSuffix(k, "_ADDR") {
					listens[portOf(t, v)] = true
				}
				for _, m := range envNameRe.FindAllStringSubmatch(v, -1) {
					if !strings.Contains(reads, m[1]) {
						t.Errorf("environment %s interpolates ${%s}, which %s does not read", k, m[1], bin)
					}
				}
			}
			if u, ok := env(s)["DATABASE_URL"]; ok {
				pu, err := url.Parse(u)
				if err != nil {
					t.Fatal(err)
				}
				pg := env(services(app)["postgres"])
				pass, _ := pu.User.Password()
				if _, ok := services(app)[pu.Hostname()]; !ok || pu.Port() != "5432" || pu.User.Username() != pg["POSTGRES_USER"] ||
					pass != pg["POSTGRES_PASSWORD"] || strings.TrimPrefix(pu.Path, "/") != pg["POSTGRES_DB"] {
					t.Errorf("DATABASE_URL %s is not the postgres service's (user %s, database %s, port 5432)", u, pg["POSTGRES_USER"], pg["POSTGRES_DB"])
				}
			}
			if b, ok := env(s)["KAFKA_BOOTSTRAP"]; ok {
				var hosts []string
				for _, hp := range strings.Split(b, ",") {
					h, p, _ := net.SplitHostPort(hp)
					if kafkaHosts[h] != p {
						t.Errorf("KAFKA_BOOTSTRAP %s: %s is not a broker of kafka/compose.yaml with a listener on that port", b, hp)
					}
					hosts = append(hosts, h)
				}
				if len(hosts) != len(kafkaHosts) {
					t.Errorf("KAFKA_BOOTSTRAP %s: want every node of the cluster (%d)", b, len(kafkaHosts))
				}
				if !slices.Contains(strs(s["networks"]), "kafka-net") {
					t.Errorf("names Kafka but is not on kafka-net (networks %v)", s["networks"])
				}
				if got := env(s)["KAFKA_TOPIC"]; got != topic {
					t.Errorf("KAFKA_TOPIC %q, kafka-init creates %q", got, topic)
				}
			}
			// What it publishes is what it listens on.
			for _, p := range published(t, s) {
				if !listens[p[1]] {
					t.Errorf("publishes container port %s, but listens on %v", p[1], listens)
				}
				if !strings.HasPrefix(p[0], "127.0.0.1:") {
					t.Errorf("publishes %s:%s beyond the host's loopback", p[0], p[1])
				}
			}
			// The healthcheck runs the image's binary with a subcommand it has, on a port it listens on.
			hc := strs(s["healthcheck"].(map[string]any)["test"])
			if len(hc) < 5 || hc[0] != "CMD" || !strings.Contains(string(dockerfile), "COPY --from=build /out/app "+hc[1]) ||
				!subs[hc[2]] || hc[3] != "--url" {
				t.Fatalf("healthcheck %q: want CMD, the image's binary (the Dockerfile's /out/app), a subcommand and --url", hc)
			}
			if !strings.Contains(help(t, bin, hc[2]), "-url") {
				t.Errorf("healthcheck: %s %s has no --url", bin, hc[2])
			}
			hu, err := url.Parse(hc[4])
			if err != nil || !listens[hu.Port()] {
				t.Errorf("healthcheck URL %s: not a port it listens on (%v)", hc[4], listens)
			}
			// Files it mounts exist; the sites file is where CRAWLER_SITES says.
			for _, v := range strs(s["volumes"]) {
				src, dst, _ := strings.Cut(v, ":")
				dst, _, _ = strings.Cut(dst, ":")
				if strings.HasPrefix(src, ".") {
					if _, err := os.Stat(filepath.Join("app", src)); err != nil {
						t.Errorf("volume %s: %v", v, err)
					}
				}
				if k := env(s)["CRAWLER_SITES"]; strings.HasSuffix(src, ".yaml") && dst != k {
					t.Errorf("volume %s: mounted at %s, CRAWLER_SITES is %s", v, dst, k)
				}
			}
			for _, n := range strs(s["networks"]) {
				if _, ok := app["networks"].(map[string]any)[n]; !ok {
					t.Errorf("network %s is not declared", n)
				}
			}
		})
	}
	// The Dockerfile copies only what is in the tree.
	for _, m := range regexp.MustCompile(`(?m)^COPY --from=build /src/(\S+)`).FindAllStringSubmatch(string(dockerfile), -1) {
		if _, err := os.Stat(filepath.Join("..", m[1])); err != nil {
			t.Errorf("Dockerfile copies %s: %v", m[1], err)
		}
	}
	// kafka-net: the kafka file names it, the app file takes it as external.
	if n := kafka["networks"].(map[string]any)["kafka-net"].(map[string]any)["name"]; n != "kafka-net" {
		t.Errorf("kafka/compose.yaml's network is named %v, want kafka-net", n)
	}
	if e := app["networks"].(map[string]any)["kafka-net"].(map[string]any)["external"]; e != true {
		t.Errorf("app/compose.yaml's kafka-net is not external")
	}
}

// siteCredentials are the variables a service's mounted sites file names under login.credentials.
func siteCredentials(t *testing.T, s map[string]any) []string {
	t.Helper()
	var out []string
	for _, v := range strs(s["volumes"]) {
		src, _, _ := strings.Cut(v, ":")
		if !strings.HasPrefix(src, ".") || !strings.HasSuffix(src, ".yaml") {
			continue
		}
		b, err := os.ReadFile(filepath.Join("app", src))
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			Sites []struct {
				Login struct {
					Credentials map[string]string `yaml:"credentials"`
				} `yaml:"login"`
			} `yaml:"sites"`
		}
		if err := yaml.Unmarshal(b, &f); err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		for _, site := range f.Sites {
			for _, name := range site.Login.Credentials {
				out = append(out, name)
			}
		}
	}
	return out
}

// TestKafkaComposeNamesWhatExists checks compose/kafka/compose.yaml's brokers: each publishes its
// HOST listener on the port it advertises, the dev cluster's (compose/dev/kafka/cluster.sh: 39092
// and every second port after it), and the quorum names every node.
func TestKafkaComposeNamesWhatExists(t *testing.T) {
	kafka := load(t, "kafka/compose.yaml")
	cluster, err := os.ReadFile("dev/kafka/cluster.sh")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cluster), "KAFKA_CLUSTER_PORT + 2(N-1)") {
		t.Fatal("compose/dev/kafka/cluster.sh no longer numbers node N's port KAFKA_CLUSTER_PORT + 2(N-1): update this test and the compose file")
	}
	var nodes []string
	for name, s := range services(kafka) {
		e := env(s)
		id, ok := e["KAFKA_NODE_ID"]
		if !ok {
			continue
		}
		h := s["hostname"].(string)
		nodes = append(nodes, id+"@"+h+":9093")
		wantHost := fmt.Sprintf("127.0.0.1:%d", 39092+2*(int(id[0]-'0')-1))
		ports := published(t, s)
		if len(ports) != 1 || ports[0][0] != wantHost {
			t.Errorf("%s publishes %v, want %s (the dev cluster's node %s)", name, ports, wantHost, id)
			continue
		}
		if !strings.Contains(e["KAFKA_LISTENERS"], "HOST://:"+ports[0][1]) {
			t.Errorf("%s publishes container port %s, which KAFKA_LISTENERS %s has no HOST listener on", name, ports[0][1], e["KAFKA_LISTENERS"])
		}
		if !strings.Contains(e["KAFKA_ADVERTISED_LISTENERS"], "HOST://"+wantHost) || !strings.Contains(e["KAFKA_ADVERTISED_LISTENERS"], "PLAINTEXT://"+h+":9092") {
			t.Errorf("%s advertises %s, want HOST://%s and PLAINTEXT://%s:9092", name, e["KAFKA_ADVERTISED_LISTENERS"], wantHost, h)
		}
	}
	slices.Sort(nodes)
	for name, s := range services(kafka) {
		if q, ok := env(s)["KAFKA_CONTROLLER_QUORUM_VOTERS"]; ok && q != strings.Join(nodes, ",") {
			t.Errorf("%s: KAFKA_CONTROLLER_QUORUM_VOTERS %s, the nodes are %s", name, q, strings.Join(nodes, ","))
		}
	}
	if len(nodes) != 3 {
		t.Errorf("%d nodes, want 3", len(nodes))
	}
}
