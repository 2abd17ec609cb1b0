// Package kafkabus is the Kafka side of the booking event contract in package events: the
// fire-and-forget Publisher the crawler uses, the SyncWriter replay uses, the mapping of an event
// to a Kafka message (config.go, message.go), the consumer group reader booking-consumer runs
// (GroupReaderConfig), topic tools (topic.go) and the offset reset behind `booking-consumer run
// --from` (offsets.go). Package events itself links no Kafka client; neither do crawler and store.
package kafkabus
