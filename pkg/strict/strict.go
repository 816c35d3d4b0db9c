// Package strict decodes YAML and JSON documents into Go types the way users deserve: unknown and
// duplicate fields are errors, a value of the wrong type is an error, and every error names the
// field path (controlPlane.hosts[1].sshPort) and the line it is on. The manifest and the Terraform
// output loaders are built on it. It walks the document with the target type side by side, so one
// parser (go.yaml.in/yaml/v3) decides what every scalar means; the final decode is encoding/json.
package strict

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// MaxDocumentBytes is the largest document Decode accepts.
const MaxDocumentBytes = 8 << 20

// maxNodes bounds the work spent on one document, so aliases cannot blow it up.
const maxNodes = 200_000

// maxDepth bounds nesting.
const maxDepth = 64

// Decode decodes one YAML (or JSON) document into out, which must be a non-nil pointer. root is
// prefixed to every field path; it may be nil. The returned error is a field.ErrorList
// aggregate listing every problem found, or a plain error for unparsable input.
func Decode(data []byte, out any, root *field.Path) error {
	_, err := DecodeTree(data, out, root)
	return err
}

// DecodeTree is Decode that also returns the document as a JSON-ready tree (map[string]any,
// []any and scalars), which tells callers which fields the document actually set.
func DecodeTree(data []byte, out any, root *field.Path) (any, error) {
	node, err := Parse(data)
	if err != nil {
		return nil, err
	}
	return DecodeNode(node, out, root)
}

// Parse parses exactly one YAML (or JSON) document and returns its root node.
func Parse(data []byte) (*yaml.Node, error) {
	if len(data) > MaxDocumentBytes {
		return nil, fmt.Errorf("document is %d bytes, more than the %d allowed", len(data), MaxDocumentBytes)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("document is empty")
		}
		return nil, fmt.Errorf("parsing YAML: %w", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, fmt.Errorf("line %d: only one YAML document is allowed, found another after ---", extra.Line)
	} else if !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("parsing YAML: %w", err)
	}
	node := &doc
	if node.Kind == yaml.DocumentNode {
		if len(node.Content) == 0 {
			return nil, errors.New("document is empty")
		}
		node = node.Content[0]
	}
	return node, nil
}

// DecodeNode decodes a parsed node into out; see DecodeTree.
func DecodeNode(node *yaml.Node, out any, root *field.Path) (any, error) {
	rv := reflect.ValueOf(out)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return nil, fmt.Errorf("strict.Decode needs a non-nil pointer, got %T", out)
	}
	w := &walker{}
	val, errs := w.walk(node, rv.Type().Elem(), root, 0)
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	if err := FromTree(val, out); err != nil {
		// The walk above checks everything encoding/json does, so this is a bug, not bad input;
		// still report it rather than panic.
		return nil, err
	}
	return val, nil
}

// FromTree decodes a JSON-ready tree into out, rejecting unknown fields.
func FromTree(tree any, out any) error {
	raw, err := json.Marshal(tree)
	if err != nil {
		return fmt.Errorf("converting document: %w", err)
	}
	jd := json.NewDecoder(bytes.NewReader(raw))
	jd.DisallowUnknownFields()
	if err := jd.Decode(out); err != nil {
		return fmt.Errorf("decoding document: %w", err)
	}
	return nil
}
