// Package kafkabus is the Kafka side of the booking event contract in package events: the
// SpoolPublisher that sends the crawler's spool (events/spool) to Kafka (spoolpublisher.go), the
// SyncWriter replay uses, the mapping of an event to a Kafka message (config.go, message.go), the
// consumer group reader booking-consumer runs (GroupReaderConfig), the consumer lag the dashboard
// shows (lag.go), topic tools (topic.go, topicreplication.go) and the offset reset behind
// `booking-consumer run --from` (offsets.go). Package events itself links no Kafka client;
// neither do crawler and store.
package kafkabus
