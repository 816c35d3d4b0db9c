// Package yamlfmt renders Go values as the YAML people read: block style, two-space indent, and
// fields in declaration order (the order of the API types) rather than alphabetical order.
package yamlfmt

import (
	"bytes"
	"encoding/json"

	"go.yaml.in/yaml/v3"
)

// Marshal renders v as YAML through its JSON encoding, so json tags and custom marshalers apply.
func Marshal(v any) ([]byte, error) {
	return marshal(v, false)
}

// MarshalObject is Marshal for Kubernetes objects: it leaves out status, null values and empty
// mappings (such as creationTimestamp: null), which apply would ignore anyway.
func MarshalObject(v any) ([]byte, error) {
	return marshal(v, true)
}

func marshal(v any, prune bool) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	if prune && len(doc.Content) == 1 {
		pruneNode(doc.Content[0], true)
		apiVersionFirst(doc.Content[0])
	}
	block(&doc)
	return Encode(&doc)
}

// Encode writes a YAML node tree with a two-space indent, for callers that edit the tree (to
// add comments, say) between Marshal and printing.
func Encode(doc *yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func block(n *yaml.Node) {
	n.Style = 0
	for _, c := range n.Content {
		block(c)
	}
}

// pruneNode removes nulls and empty mappings below n, and status at the top level.
func pruneNode(n *yaml.Node, top bool) {
	switch n.Kind {
	case yaml.MappingNode:
		kept := n.Content[:0]
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if top && k.Value == "status" {
				continue
			}
			pruneNode(v, false)
			if v.Tag == "!!null" || (v.Kind == yaml.MappingNode && len(v.Content) == 0) {
				continue
			}
			kept = append(kept, k, v)
		}
		n.Content = kept
	case yaml.SequenceNode:
		for _, c := range n.Content {
			pruneNode(c, false)
		}
	}
}

// apiVersionFirst moves apiVersion ahead of kind, the order every Kubernetes manifest uses.
func apiVersionFirst(n *yaml.Node) {
	if n.Kind != yaml.MappingNode || len(n.Content) < 4 {
		return
	}
	if n.Content[0].Value == "kind" && n.Content[2].Value == "apiVersion" {
		n.Content[0], n.Content[1], n.Content[2], n.Content[3] = n.Content[2], n.Content[3], n.Content[0], n.Content[1]
	}
}
