package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/slipway-dev/slipway/pkg/phases"
)

// A manifest without worker pools gets an empty list, not null, and reaches no cluster (the
// nil API would fail).
func TestPrintPoolsWithoutPools(t *testing.T) {
	var out bytes.Buffer
	if err := printPools(context.Background(), nil, phases.Rendered{}, &out); err != nil {
		t.Fatal(err)
	}
	var res map[string]json.RawMessage
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || string(res["pools"]) != "[]" {
		t.Fatalf("printed %s (%v), want {\"pools\": []}", out.String(), err)
	}
}
