package suggest

import (
	"bytes"
	"fmt"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"gopkg.in/yaml.v3"
)

// marshal writes the sites file of one site as the crawler reads it (site.SiteSpec, whose
// zero keys are left out), with a header comment.
func marshal(s site.SiteSpec, comment string) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n", comment)
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(map[string][]site.SiteSpec{"sites": {s}}); err != nil {
		return nil, fmt.Errorf("write the sites file: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("write the sites file: %w", err)
	}
	return b.Bytes(), nil
}
