package events

import (
	"bytes"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func jsonschemaUnmarshal(b []byte) (any, error) { return jsonschema.UnmarshalJSON(bytes.NewReader(b)) }
