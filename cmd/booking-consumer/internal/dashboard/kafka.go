package dashboard

import "github.com/golfcrawler/golf-crawler/events/kafkabus"

// PartitionLag is one partition's consumer lag (Config.Lag), as kafkabus.GroupLag reports it: the
// dashboard reaches Kafka only through events/kafkabus.
type PartitionLag = kafkabus.PartitionLag
