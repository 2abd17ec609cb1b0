# compose/dev/kafka/cluster.sh: the three-node Kafka of compose/dev/stack (KAFKA_BROKERS=3), sourced
# by it. Each node runs broker and controller in one JVM (KRaft combined mode) from the same jars as
# the single broker, with its own directory $STACK_DIR/kafka-N (data, logs, server.properties,
# kafka.pid) and its own ports: client KAFKA_CLUSTER_PORT + 2(N-1), controller the next one.
#
# $STACK_DIR/kafka-N/nodes records the node count and first port the node was formatted for, so
# 'env', 'status', 'down' and 'stop-node' find the cluster without KAFKA_BROKERS, and 'up' refuses a
# data dir formatted for another count (a KRaft quorum cannot change size by editing a config file).
#
# Sized for a shared 2-core machine: 3 x (-Xms256m -Xmx384m, one GC thread, two JIT threads), two
# network and two I/O threads per node, and KRaft timeouts well above a GC or scheduling stall:
# election 3 s, fetch 6 s (defaults 1 s and 2 s), broker session 15 s (default 9 s).
# shellcheck shell=bash

KAFKA_CLUSTER_HEAP_OPTS="${KAFKA_CLUSTER_HEAP_OPTS:--Xms256m -Xmx384m -XX:ParallelGCThreads=1 -XX:ConcGCThreads=1 -XX:CICompilerCount=2}"

kc_marker() { echo "$STACK_DIR/kafka-$1/nodes"; }

# kc_recorded FIELD: the value of nodes= or port= from the first node's marker, empty when none.
kc_recorded() { [[ -f "$(kc_marker 1)" ]] && sed -n "s/^$1=//p" "$(kc_marker 1)" | head -n1 || true; }

# kc_resolve sets K_NODES and K_CPORT: from the environment, else from the markers, else 1 / 39092.
kc_resolve() {
  K_NODES="${KAFKA_BROKERS:-$(kc_recorded nodes)}"
  K_NODES="${K_NODES:-1}"
  [[ "$K_NODES" =~ ^[1-9]$ ]] || die "KAFKA_BROKERS=$K_NODES: want a node count from 1 to 9"
  K_CPORT="${KAFKA_CLUSTER_PORT:-$(kc_recorded port)}"
  K_CPORT="${K_CPORT:-39092}"
  [[ "$K_CPORT" =~ ^[0-9]+$ ]] || die "KAFKA_CLUSTER_PORT=$K_CPORT is not a port"
}

kc_port() { echo $((K_CPORT + 2 * ($1 - 1))); }
kc_cport() { echo $((K_CPORT + 2 * ($1 - 1) + 1)); }

# kc_check_count refuses data formatted for another node count, before anything is started.
kc_check_count() {
  local m n
  for m in "$STACK_DIR"/kafka-*/nodes; do
    [[ -f "$m" ]] || continue
    n="$(sed -n 's/^nodes=//p' "$m")"
    [[ "$n" == "$K_NODES" ]] && continue
    die "$(dirname "$m") is formatted for a $n-node cluster, not $K_NODES: use KAFKA_BROKERS=$n, or 'compose/dev/stack reset' to wipe it"
  done
  if (( K_NODES > 1 )) && [[ -f "$K_DATA/meta.properties" ]]; then
    die "$K_DATA is formatted for a single broker, not $K_NODES nodes: use another STACK_DIR, or 'compose/dev/stack reset' to wipe it"
  fi
}

kc_voters() {
  local i v=""
  for ((i = 1; i <= K_NODES; i++)); do v+="${v:+,}$i@127.0.0.1:$(kc_cport "$i")"; done
  echo "$v"
}

kc_write_conf() {
  local n="$1" d="$STACK_DIR/kafka-$1" rf=$((K_NODES < 3 ? K_NODES : 3)) isr=$((K_NODES < 3 ? 1 : 2))
  mkdir -p "$d/data" "$d/logs"
  cat >"$d/server.properties" <<CONF
process.roles=broker,controller
node.id=$n
controller.quorum.voters=$(kc_voters)
listeners=PLAINTEXT://127.0.0.1:$(kc_port "$n"),CONTROLLER://127.0.0.1:$(kc_cport "$n")
advertised.listeners=PLAINTEXT://127.0.0.1:$(kc_port "$n")
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$d/data
num.partitions=3
default.replication.factor=$rf
min.insync.replicas=$isr
auto.create.topics.enable=true
offsets.topic.replication.factor=$rf
offsets.topic.num.partitions=3
transaction.state.log.replication.factor=$rf
transaction.state.log.min.isr=$isr
transaction.state.log.num.partitions=1
group.initial.rebalance.delay.ms=0
controller.quorum.election.timeout.ms=3000
controller.quorum.fetch.timeout.ms=6000
broker.heartbeat.interval.ms=2000
broker.session.timeout.ms=15000
num.network.threads=2
num.io.threads=2
background.threads=2
num.replica.fetchers=1
num.recovery.threads.per.data.dir=1
log.cleaner.threads=1
log.cleaner.dedupe.buffer.size=8388608
log.retention.hours=168
CONF
  if [[ "$KAFKA_VERSION" != 3.* ]]; then
    printf '%s\n' "share.coordinator.state.topic.replication.factor=$rf" \
      "share.coordinator.state.topic.min.isr=$isr" >>"$d/server.properties"
  fi
}

kc_format() {
  local n="$1" d="$STACK_DIR/kafka-$1"
  if [[ -d "$d/data" && -n "$(ls -A "$d/data" 2>/dev/null)" && ! -f "$d/data/meta.properties" ]]; then
    die "$d/data holds data but no meta.properties (a half-formatted log dir?): run 'compose/dev/stack reset'"
  fi
  kc_write_conf "$n"
  if [[ ! -f "$d/data/meta.properties" ]]; then
    say "formatting node $n in $d/data"
    # shellcheck disable=SC2046
    java -Xmx256m -XX:TieredStopAtLevel=1 -Djava.awt.headless=true $(k_logopt) -Dkafka.logs.dir="$d/logs" \
      -cp "$K_LIB/*" kafka.tools.StorageTool format -t "$KAFKA_CLUSTER_ID" -c "$d/server.properties" --ignore-formatted \
      >"$d/logs/format.log" 2>&1 || { tail -n 20 "$d/logs/format.log" >&2; die "node $n: storage format failed; 'compose/dev/stack reset' wipes it"; }
  fi
  printf 'nodes=%s\nport=%s\n' "$K_NODES" "$K_CPORT" >"$(kc_marker "$n")"
}

kc_pid() {
  local pid f="$STACK_DIR/kafka-$1/kafka.pid"
  [[ -f "$f" ]] || return 1
  pid="$(cat "$f")"
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null && grep -qa 'kafka.Kafka' "/proc/$pid/cmdline" 2>/dev/null || return 1
  echo "$pid"
}

# kc_start N launches node N in the background; kc_up waits for all: a node opens its client port
# only once a quorum of controllers has elected a leader, so the nodes must start together.
kc_start() {
  local n="$1" d="$STACK_DIR/kafka-$1" p
  p="$(kc_port "$n")"
  port_open "$p" && die "port $p (node $n) is taken by another process: stop it or set KAFKA_CLUSTER_PORT"
  port_open "$(kc_cport "$n")" && die "port $(kc_cport "$n") (node $n) is taken by another process: stop it or set KAFKA_CLUSTER_PORT"
  kc_format "$n"
  # shellcheck disable=SC2086,SC2046
  nohup java $KAFKA_CLUSTER_HEAP_OPTS -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 \
    -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true $(k_logopt) -Dkafka.logs.dir="$d/logs" \
    -cp "$K_LIB/*" kafka.Kafka "$d/server.properties" >"$d/logs/stdout.log" 2>&1 </dev/null &
  echo $! >"$d/kafka.pid"
}

kc_up() {
  local n pid started=() deadline
  need_java
  k_fetch
  for ((n = 1; n <= K_NODES; n++)); do
    if pid="$(kc_pid "$n")"; then say "kafka node $n already running (pid $pid) on 127.0.0.1:$(kc_port "$n")"; continue; fi
    [[ -f "$STACK_DIR/kafka-$n/kafka.pid" ]] && { say "removing stale kafka-$n/kafka.pid"; rm -f "$STACK_DIR/kafka-$n/kafka.pid"; }
    kc_start "$n"
    started+=("$n")
  done
  deadline=$((SECONDS + STACK_TIMEOUT))
  for n in "${started[@]}"; do
    pid="$(cat "$STACK_DIR/kafka-$n/kafka.pid")"
    until port_open "$(kc_port "$n")"; do
      # kill -0, not kc_pid: just after the fork /proc/PID/cmdline is still the shell's, not java's
      if ! kill -0 "$pid" 2>/dev/null; then
        tail -n 30 "$STACK_DIR/kafka-$n/logs/server.log" "$STACK_DIR/kafka-$n/logs/stdout.log" >&2 2>/dev/null || true
        die "kafka node $n exited during start-up (logs: $STACK_DIR/kafka-$n/logs)"
      fi
      (( SECONDS < deadline )) || die "kafka node $n not ready after ${STACK_TIMEOUT}s (logs: $STACK_DIR/kafka-$n/logs)"
      sleep 0.5
    done
    k_probe "$(kc_port "$n")" || die "node $n: port open but no answer to ApiVersions (logs: $STACK_DIR/kafka-$n/logs)"
    say "kafka node $n ready on 127.0.0.1:$(kc_port "$n") (pid $(kc_pid "$n"))"
  done
}

# kc_stop N: SIGTERM (controlled shutdown: leadership moves first), SIGKILL after 30 s.
kc_stop() {
  local n="$1" pid
  if pid="$(kc_pid "$n")"; then
    kill -TERM "$pid"
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    if kill -0 "$pid" 2>/dev/null; then say "node $n ignored SIGTERM for 30s; killing"; kill -KILL "$pid"; fi
    say "kafka node $n stopped (pid $pid)"
  fi
  rm -f "$STACK_DIR/kafka-$n/kafka.pid"
}

kc_down() {
  local n
  for ((n = K_NODES; n >= 1; n--)); do kc_stop "$n"; done
}

kc_bootstrap() {
  local n b=""
  for ((n = 1; n <= K_NODES; n++)); do b+="${b:+,}127.0.0.1:$(kc_port "$n")"; done
  echo "$b"
}

# kc_controller prints the active controller's node id: the leader of the newest epoch in the
# running nodes' quorum-state files (the Metadata API names a random broker in KRaft).
kc_controller() {
  local n f best=-1 leader=""
  for ((n = 1; n <= K_NODES; n++)); do
    kc_pid "$n" >/dev/null || continue
    f="$STACK_DIR/kafka-$n/data/__cluster_metadata-0/quorum-state"
    [[ -f "$f" ]] || continue
    local e l
    e="$(sed -n 's/.*"leaderEpoch":\([0-9-]*\).*/\1/p' "$f")"
    l="$(sed -n 's/.*"leaderId":\([0-9-]*\).*/\1/p' "$f")"
    [[ -n "$e" && -n "$l" && "$l" != -1 ]] && (( e > best )) && { best="$e"; leader="$l"; }
  done
  [[ -n "$leader" ]] && echo "$leader"
}

kc_status() {
  local n pid rc=0 ctl
  ctl="$(kc_controller || true)"
  for ((n = 1; n <= K_NODES; n++)); do
    if pid="$(kc_pid "$n")" && k_probe "$(kc_port "$n")"; then
      say "kafka-$n:  up (pid $pid) 127.0.0.1:$(kc_port "$n") controller 127.0.0.1:$(kc_cport "$n")$([[ "$ctl" == "$n" ]] && echo ' [active controller]')"
    elif pid="$(kc_pid "$n")"; then
      say "kafka-$n:  not answering (pid $pid, stopped or starting) 127.0.0.1:$(kc_port "$n")"; rc=1
    else
      say "kafka-$n:  down"; rc=1
    fi
  done
  return $rc
}
