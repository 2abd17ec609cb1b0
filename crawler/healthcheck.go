package crawler

// HealthCheck is a section of /healthz that a command adds beside the crawl's (cmd/crawler: the
// alerts' channels). It returns the section's JSON value and the reasons, if any, that make
// /healthz answer 503; it is called on every /healthz request and must be quick and safe for
// concurrent use.
type HealthCheck func() (value any, unhealthy []string)

// AddHealthCheck adds check as section name of /healthz's "checks".
func (m *CrawlerMetrics) AddHealthCheck(name string, check HealthCheck) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.checks == nil {
		m.checks = map[string]HealthCheck{}
	}
	m.checks[name] = check
}

// runChecks runs the added checks into h and returns their reasons; m.mu is not held.
func (m *CrawlerMetrics) runChecks(h *healthState) []string {
	m.mu.Lock()
	checks := make(map[string]HealthCheck, len(m.checks))
	for k, c := range m.checks {
		checks[k] = c
	}
	m.mu.Unlock()
	var bad []string
	for name, c := range checks {
		v, reasons := c()
		if h.Checks == nil {
			h.Checks = map[string]any{}
		}
		h.Checks[name] = v
		bad = append(bad, reasons...)
	}
	return bad
}
