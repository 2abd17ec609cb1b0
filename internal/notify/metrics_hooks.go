package notify

// Claimed counts n matches claimed for sending by a claim path outside this package (the
// crawler's Runner.Alerts hook, cmd/crawler).
func (m *Metrics) Claimed(n int) { m.claimed(n) }

// Skipped counts n matches recorded as skipped for reason by a claim path outside this package.
func (m *Metrics) Skipped(reason string, n int) { m.skipped(reason, n) }
