// Package chaoscluster is the three-node Kafka release gate (`make chaos-cluster`): the crawler
// publishing the simulated site every second through the real publisher, three booking-consumer
// run processes in one group, booking-consumer notify with a webhook watch of every opening, and,
// one at a time, the faults a cluster meets:
//
//   - TestClusterChaos/LeaderKill: SIGKILL of the leader of a partition that is not the active
//     controller, mid-stream; the node is restarted once its partitions have new leaders.
//   - TestClusterChaos/ControllerKill: SIGKILL of the active KRaft controller; restarted once a
//     new one is elected.
//   - TestClusterChaos/RollingRestart: each node in turn stopped (SIGTERM) and started again.
//   - TestClusterChaos/PausedNode: a node SIGSTOPped past the broker session timeout (15 s on the
//     dev cluster), then SIGCONTed.
//   - TestClusterChaos/ConsumerKills: one consumer process SIGKILLed every 20 s for 3 minutes,
//     a replacement started each time, so the group rebalances with batches in flight.
//
// After each scenario: every event the publisher counted as delivered is stored exactly once;
// dropped and undeliverable events are counted and each is logged with its event_id; committed
// offsets, sampled while the scenario runs, never pass a message that is not in the database and
// never go back; the listing_lifetimes projection equals the booking_lifetimes view; the group's
// lag returns to 0; every stored opening is claimed by the notifier, and each sent claim reached
// the webhook once (twice at most: the documented crash window), nothing unclaimed reached it.
//
// BenchmarkClusterDrain and BenchmarkClusterNodeDown (compose/dev/bench-cluster, make
// bench-cluster) measure the cluster's overhead on the same private stack.
//
// The tests are build-tagged (//go:build cluster): `go test ./...` never compiles them. Run them
// through compose/dev/chaos-cluster, which starts a private three-node stack (its own STACK_DIR,
// ports 39092..39097 and PostgreSQL 39432 by default) and stops it afterwards.
package chaoscluster
