package terraform

import (
	"strings"
	"testing"
)

// TestKeepContract: the user's own outputs are blanked out before parsing, and errors in
// slipway's outputs still name the line they are on in the input.
func TestKeepContract(t *testing.T) {
	doc := "{\n  \"kubeconfig\": {\"value\": \"line1\\nline2\",\n    \"sensitive\": true},\n" +
		"  \"list\": {\"value\": [1,\n 2, {\"é\": \"ü\"}]},\n" +
		"  \"slipway_api\": {\"value\": {\"endpoint\": \"lb\",\n    \"bogus\": 1}}\n}\n"
	_, err := Parse([]byte(doc))
	if err == nil || !strings.Contains(err.Error(), "slipway_api.value.bogus: Forbidden: line 7: unknown field") {
		t.Fatalf("Parse = %v, want the unknown field on line 7", err)
	}
	kept, err := keepContract([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != len(doc) || strings.Count(string(kept), "\n") != strings.Count(doc, "\n") {
		t.Errorf("blanking changed the length or the lines:\n%s", kept)
	}
	if strings.Contains(string(kept), "line1") || strings.Contains(string(kept), "é") || !strings.Contains(string(kept), `"endpoint": "lb"`) {
		t.Errorf("blanked:\n%s", kept)
	}
	o, err := Parse([]byte(strings.Replace(doc, ",\n    \"bogus\": 1", "", 1)))
	if err != nil || o.API.Endpoint != "lb" {
		t.Fatalf("Parse = %+v, %v", o, err)
	}
}
