package strict

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

type inner struct {
	Port  int               `json:"port"`
	Tags  map[string]string `json:"tags,omitempty"`
	Ratio float64           `json:"ratio,omitempty"`
}

type embedded struct {
	Extra string `json:"extra,omitempty"`
}

type outer struct {
	embedded `json:",inline"`
	Name     string              `json:"name"`
	On       *bool               `json:"on,omitempty"`
	Items    []inner             `json:"items,omitempty"`
	Surge    *intstr.IntOrString `json:"surge,omitempty"`
	Free     map[string]any      `json:"free,omitempty"`
	Small    int8                `json:"small,omitempty"`
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		wantErr []string // substrings that must all appear
		check   func(t *testing.T, o *outer)
	}{
		{
			name: "valid document",
			doc:  "name: a\non: true\nextra: x\nitems:\n- port: 22\n  tags: {a: b}\n  ratio: 1\nsurge: 25%\nfree: {x: [1, two]}\n",
			check: func(t *testing.T, o *outer) {
				if o.Name != "a" || !*o.On || o.Extra != "x" || o.Items[0].Port != 22 || o.Items[0].Tags["a"] != "b" || o.Surge.StrVal != "25%" {
					t.Errorf("decoded %+v", o)
				}
			},
		},
		{
			name:    "unknown field names its path and suggests",
			doc:     "name: a\nitems:\n- prot: 22\n",
			wantErr: []string{"items[0].prot", "line 3", `did you mean "port"`},
		},
		{
			name:    "duplicate field",
			doc:     "name: a\nname: b\n",
			wantErr: []string{"name: Duplicate value", "line 2"},
		},
		{
			name:    "duplicate map key",
			doc:     "name: a\nitems:\n- port: 1\n  tags: {k: v, k: w}\n",
			wantErr: []string{"items[0].tags[k]: Duplicate value"},
		},
		{
			name:    "number where a string belongs",
			doc:     "name: 1.34\n",
			wantErr: []string{"name: Invalid value", "must be a string"},
		},
		{
			name:    "string where a number belongs",
			doc:     "name: a\nitems:\n- port: twenty\n",
			wantErr: []string{"items[0].port", "whole number"},
		},
		{
			name:    "integer overflow",
			doc:     "name: a\nsmall: 300\n",
			wantErr: []string{"small", "fits in 8 bits"},
		},
		{
			name:    "list where a mapping belongs",
			doc:     "name: a\nitems: {port: 1}\n",
			wantErr: []string{"items", "must be a list"},
		},
		{
			name:    "yes is not a boolean",
			doc:     "name: a\non: yes\n",
			wantErr: []string{"on", "true or false"},
		},
		{
			name:    "merge key inside a mapping",
			doc:     "name: a\nitems:\n- &x {port: 1}\n- <<: *x\n",
			wantErr: []string{"merge keys"},
		},
		{
			name: "aliases are followed",
			doc:  "name: a\nitems:\n- &x {port: 7}\n- *x\n",
			check: func(t *testing.T, o *outer) {
				if len(o.Items) != 2 || o.Items[1].Port != 7 {
					t.Errorf("items = %+v", o.Items)
				}
			},
		},
		{
			name:    "every problem is reported at once",
			doc:     "name: 3\nbogus: 1\nitems:\n- port: x\n",
			wantErr: []string{"name:", "bogus:", "items[0].port"},
		},
		{
			name:    "second document",
			doc:     "name: a\n---\nname: b\n",
			wantErr: []string{"only one YAML document"},
		},
		{name: "empty", doc: "", wantErr: []string{"empty"}},
		{name: "syntax error", doc: "name: [a\n", wantErr: []string{"parsing YAML"}},
		{name: "scalar document", doc: "hello\n", wantErr: []string{"must be a mapping"}},
		{
			name:    "alias bomb is bounded",
			doc:     bomb(),
			wantErr: []string{"too many aliases"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o outer
			err := Decode([]byte(tt.doc), &o, nil)
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				tt.check(t, &o)
				return
			}
			if err == nil {
				t.Fatalf("expected an error containing %q, got none (decoded %+v)", tt.wantErr, o)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestDecodeRootPath(t *testing.T) {
	var o outer
	err := Decode([]byte("nme: a\n"), &o, field.NewPath("slipway_hosts", "value"))
	if err == nil || !strings.Contains(err.Error(), "slipway_hosts.value.nme") {
		t.Fatalf("error %v does not name the rooted path", err)
	}
}

func TestDecodeTreeKeepsOnlySetFields(t *testing.T) {
	var o outer
	tree, err := DecodeTree([]byte("name: a\nitems:\n- port: 2\n"), &o, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := tree.(map[string]any)
	if _, ok := m["on"]; ok {
		t.Errorf("tree has a field the document did not set: %v", m)
	}
	if m["name"] != "a" {
		t.Errorf("tree = %v", m)
	}
}

// bomb builds a "billion laughs" document of nested aliases.
func bomb() string {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		b.WriteString("a")
		b.WriteString(string(rune('0' + i)))
		b.WriteString(": &a")
		b.WriteString(string(rune('0' + i)))
		b.WriteString(" [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a")
			b.WriteString(string(rune('0' + i - 1)))
		}
		b.WriteString("]\n")
	}
	b.WriteString("free: {bomb: *a8}\n")
	return b.String()
}
