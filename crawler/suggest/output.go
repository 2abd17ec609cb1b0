package suggest

import (
	"bytes"
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/golfcrawler/golf-crawler/crawler"
)

// outSite is one site of the sites file as suggest writes it: the keys it sets, in the order the
// README documents them, nothing else.
type outSite struct {
	Name        string           `yaml:"name"`
	URLTemplate string           `yaml:"url_template,omitempty"`
	Targets     []crawler.Target `yaml:"targets,omitempty"`
	DaysAhead   int              `yaml:"days_ahead"`
	Charset     string           `yaml:"charset,omitempty"`
	Login       *outLogin        `yaml:"login,omitempty"`
	Requests    []outRequest     `yaml:"requests,omitempty"`
	Format      string           `yaml:"format,omitempty"`
	JSON        *outJSON         `yaml:"json,omitempty"`
	List        string           `yaml:"list,omitempty"`
	Row         string           `yaml:"row,omitempty"`
	Fields      outFields        `yaml:"fields"`
	NextPage    string           `yaml:"next_page,omitempty"`
}

type outRequest struct {
	Method  string            `yaml:"method,omitempty"`
	URL     string            `yaml:"url"`
	Headers map[string]string `yaml:"headers,omitempty"`
	Form    map[string]string `yaml:"form,omitempty"`
	JSON    map[string]any    `yaml:"json,omitempty"`
}

type outJSON struct {
	Rows      string    `yaml:"rows"`
	Success   *outCond  `yaml:"success,omitempty"`
	EmptyWhen []outCond `yaml:"empty_when,omitempty"`
}

type outCond struct {
	Path   string `yaml:"path"`
	Equals string `yaml:"equals,omitempty"`
	Is     string `yaml:"is,omitempty"`
}

type outLogin struct {
	URL         string            `yaml:"url"`
	Form        map[string]string `yaml:"form"`
	Credentials map[string]string `yaml:"credentials"`
	LoginPage   outLoginPage      `yaml:"login_page"`
}

type outLoginPage struct {
	Selector string `yaml:"selector,omitempty"`
	Statuses []int  `yaml:"statuses,omitempty"`
}

type outField struct {
	Selector string `yaml:"selector,omitempty"`
	Path     string `yaml:"path,omitempty"`
	Value    string `yaml:"value,omitempty"`
}

type outFields struct {
	Course     *outField `yaml:"course,omitempty"`
	CoursePart *outField `yaml:"course_part,omitempty"`
	RoundDate  *outField `yaml:"round_date,omitempty"`
	TeeTime    *outField `yaml:"tee_time,omitempty"`
	Price      *outField `yaml:"price,omitempty"`
	Players    *outField `yaml:"players,omitempty"`
}

func (f *outFields) set(name string, p pick, json bool) {
	of := &outField{Value: p.value}
	if p.value == "" {
		if json {
			of.Path = p.where
		} else {
			of.Selector = p.where
		}
	}
	switch name {
	case "course":
		f.Course = of
	case "course_part":
		f.CoursePart = of
	case "round_date":
		f.RoundDate = of
	case "tee_time":
		f.TeeTime = of
	case "price":
		f.Price = of
	case "players":
		f.Players = of
	}
}

// marshal writes the sites file of one site, with a header comment.
func marshal(s outSite, comment string) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n", comment)
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(map[string][]outSite{"sites": {s}}); err != nil {
		return nil, fmt.Errorf("write the sites file: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("write the sites file: %w", err)
	}
	return b.Bytes(), nil
}
