package site

import (
	"fmt"
	"strings"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/korean"
	"gopkg.in/yaml.v3"
)

// koreanAliases are the labels Korean servers send that the WHATWG Encoding Standard lacks; they
// all name windows-949, which Go's korean.EUCKR decodes (it is the WHATWG's "euc-kr").
var koreanAliases = map[string]bool{"cp949": true, "ms949": true, "x-windows-949": true, "uhc": true, "euc_kr": true}

// LookupCharset returns the encoding a charset label names, and its canonical name: the WHATWG
// labels (case-insensitive, as browsers read them) and koreanAliases. An unknown label is an error.
func LookupCharset(label string) (encoding.Encoding, string, error) {
	l := strings.ToLower(strings.Trim(strings.TrimSpace(label), `"'`))
	if koreanAliases[l] {
		return korean.EUCKR, "euc-kr", nil
	}
	e, err := htmlindex.Get(l)
	if err != nil {
		return nil, "", fmt.Errorf("unknown charset %q (a WHATWG label such as euc-kr or utf-8, or cp949, ms949, x-windows-949, uhc, euc_kr)", label)
	}
	name, _ := htmlindex.Name(e)
	return e, name, nil
}

// Charset is the sites file's charset key: a label LookupCharset knows, checked at load with the
// line of the key.
type Charset string

// UnmarshalYAML reads and checks a charset label.
func (c *Charset) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: charset must be a label such as euc-kr", n.Line)
	}
	if _, _, err := LookupCharset(n.Value); err != nil {
		return fmt.Errorf("line %d: charset: %w", n.Line, err)
	}
	*c = Charset(n.Value)
	return nil
}
