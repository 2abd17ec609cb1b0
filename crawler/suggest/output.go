package suggest

import (
	"bytes"
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/golfcrawler/golf-crawler/crawler"
)

// marshal writes the sites file of one site as the crawler reads it (crawler.SiteSpec, whose
// zero keys are left out), with a header comment.
func marshal(s crawler.SiteSpec, comment string) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n", comment)
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(map[string][]crawler.SiteSpec{"sites": {s}}); err != nil {
		return nil, fmt.Errorf("write the sites file: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("write the sites file: %w", err)
	}
	return b.Bytes(), nil
}
