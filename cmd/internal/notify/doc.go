// Package notify is the tee-time alert engine: watches, the entering rule (Rule), claim batches
// (Config.Batch), message groups (Groups), messages, channels (generic webhook, Slack, Discord,
// Telegram) and the per-channel Sender. It keeps its claims behind ClaimStore and imports no
// database: cmd/internal/notify/pgclaims is the PostgreSQL store of `booking-consumer notify` (a
// second consumer group on booking-events), cmd/internal/notify/liteclaims the SQLite store of
// the crawler's state dir; both pass cmd/internal/notify/claimstoretest. The Telegram chat is
// cmd/internal/notify/chat, and the service that builds the senders and pollers once for both
// commands is cmd/internal/alerts (above this package and the chat).
//
// Its names, by job:
//
//   - The watches file: Config (Parse, LoadFile), Watch, Channel, ChannelType, Describe, Weekday,
//     Seoul; the chat's watches beside the file's: ChatStore, ChatWatch (Config.WithChat).
//   - Matching and claiming: Claim, ClaimBatch, Claimed, Close, ClaimKey, WatchFingerprint (a
//     watch is a query: Config.Asking, ClaimBatch.AddBacklog), ClaimStore, Status, the reasons
//     (ReasonStale, ...), DefaultMaxAge and the other defaults, ErrLost.
//   - Delivery: Groups, Group, GroupClaim, PickRow (a store's Pick), Message, Text,
//     MaxEventsPerMessage, WebhookBody, Answer, Sender, Outcome, NewClient (the one HTTP client
//     policy of alert requests), Metrics.
//   - Listing and resending: Notification, Filter, Statuses, ResendFilter.
//
// The guarantees, and why they hold:
//
//   - A match is claimed once. A claim key is a uuid v5 over (watch, channel, event id); the
//     store's Claim creates nothing for a key it has, in one durable transaction (the consume
//     loop commits offsets only after it).
//   - Nothing stale is sent. At claim time a match whose event occurred more than MaxAge ago, or
//     whose listing already has a later close stored, is recorded as skipped with the reason
//     (see Rule). Before it sends a picked group, the Sender checks again: claims older than
//     MaxAge by then, whose listing closed since, or of a watch removed from (watch_removed) or
//     muted in (watch_muted) the watches file are skipped too.
//   - A claim is delivered once in effect. A message has a stable Idempotency-Key (Group.Key);
//     a process that dies between the channel's answer and the mark sends it again with the same
//     key (generic webhook: a deduplicating receiver sees one delivery). Slack, Discord and
//     Telegram have no such key: there that crash window, and only it, can repeat a message
//     once; a request they may have received (a timeout after it was sent) is never re-sent
//     (StatusUnknown).
//   - A slow or broken channel blocks nothing else: one sender per channel, each rate-limited,
//     transient errors (not-sent connection errors, 5xx, 408, 429 with Retry-After; timeouts
//     after sending on the webhook) retried with backoff up to MaxAttempts, permanent ones (3xx,
//     other 4xx) failing only that notification.
package notify
