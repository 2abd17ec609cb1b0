// Package consumerbench holds the consumer's end-to-end benchmarks against the real stack, with
// Kafka in the loop: events are produced to a fresh topic and drained by consumer.Run over a real
// kafkabus.GroupReader (the consumer's own) into a fresh database (storetest), next to the alternatives it is held to,
// measured in the same run:
//
//   - BenchmarkConsumerIngest: fresh events vs a naive consumer (FetchMessage → one autocommit
//     INSERT ... ON CONFLICT → CommitMessages per message) vs a raw COPY of the same rows, and a
//     replay of the same topic (pure duplicates) vs fresh;
//   - BenchmarkPracticeReplay: the ~7,000-event practice set (crawler/practice) published and
//     consumed end to end, vs the naive consumer;
//   - BenchmarkBacklogRSS: the booking-consumer binary's peak RSS draining a 1M-event backlog
//     vs a 100k one (memory is bounded by the batch size, not the backlog);
//   - BenchmarkLargeMessageRSS: its peak RSS draining 1,000 junk messages of 900 KB vs 1,000
//     normal events (memory is bounded in bytes: target ≤ 2×);
//   - BenchmarkQueueCapacity: its drain rate with kafka-go's queue at 8 messages (the default,
//     for the byte bound) vs 1000;
//   - BenchmarkProcessDrain: processes side by side, the booking-consumer binary vs an
//     expert-shaped franz-go peer (compose/dev/peers, a module of its own) vs COPY, each into a
//     database made by migrate: drain, from process start, CPU per event (docs/performance.md).
//
// It has no non-test code. compose/dev/bench runs it and writes BENCHMARKS.md; by hand:
//
//	go test ./internal/consumer/consumerbench/ -run '^$' -bench . -benchtime 1x -timeout 30m -v
//
// Sizes come from the environment: BENCH_EVENTS (50000), BENCH_NAIVE_EVENTS (3000),
// BENCH_BACKLOG (1000000), BENCH_LARGE (1000), BENCH_QUEUE_EVENTS (100000),
// BENCH_PROCESS_EVENTS (500000) and BENCH_PROCESS_ROUNDS (5).
package consumerbench
