package testkit

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

// YAMLDoc is a YAML document as the JSON values a JSON Schema validates (numbers as json.Number;
// anchors and merge keys resolved).
func YAMLDoc(t testing.TB, data []byte) any {
	t.Helper()
	var y any
	if err := yaml.Unmarshal(data, &y); err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(y)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// JSONSchema compiles the JSON Schema in file (a vendored meta-schema), known to its own $refs as id.
func JSONSchema(t testing.TB, file, id string) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(id)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}
