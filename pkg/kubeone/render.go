package kubeone

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/slipway-dev/slipway/pkg/internal/escape"
	"github.com/slipway-dev/slipway/pkg/yamlfmt"
)

// emptyMeaningful are the keys whose empty mapping is a choice ({} selects the option), which
// rendering keeps; other empty mappings and nulls are left out.
var emptyMeaningful = map[string]bool{"openstack": true, "none": true, "external": true, "canal": true, "flannel": true, "cilium": true}

// Manifest renders the converted cluster as a slipway manifest: a header naming the source and
// the number of warnings, and the comments that say where KubeOne's default was written out.
func (r *Result) Manifest(source string) ([]byte, error) {
	raw, err := yamlfmt.Marshal(r.Cluster)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	root := doc.Content[0]
	prune(root)
	annotate(root, "", r.comments)
	head := fmt.Sprintf("Converted from the KubeOneCluster %s by `slipway config migrate --from-kubeone`.", source)
	if n := len(r.Warnings); n > 0 {
		head += fmt.Sprintf("\n%d KubeOne settings were not carried over as they were: see the warnings it printed.", n)
	}
	head += "\nCheck it with `slipway config dump -m <this file> [-t <terraform>]`."
	root.HeadComment = head
	return yamlfmt.Encode(&doc)
}

func prune(n *yaml.Node) {
	switch n.Kind {
	case yaml.MappingNode:
		kept := n.Content[:0]
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			prune(v)
			// Fields without omitempty render as "" (or, for operatingSystemSpec, all false) when
			// KubeOne did not set them; written out, they would win over the Terraform output's
			// values of the same pool when the manifest and the output are merged.
			if v.Tag == "!!null" || (v.Tag == "!!str" && v.Value == "") || (v.Kind == yaml.MappingNode && len(v.Content) == 0 && !emptyMeaningful[k.Value]) ||
				(k.Value == "operatingSystemSpec" && allFalse(v)) {
				continue
			}
			if v.Kind == yaml.MappingNode && len(v.Content) == 0 {
				v.Style = yaml.FlowStyle
			}
			kept = append(kept, k, v)
		}
		n.Content = kept
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			n.Style = yaml.FlowStyle
		}
		for _, c := range n.Content {
			prune(c)
		}
	}
}

func allFalse(n *yaml.Node) bool {
	for i := 1; i < len(n.Content); i += 2 {
		if n.Content[i].Tag != "!!bool" || n.Content[i].Value != "false" {
			return false
		}
	}
	return n.Kind == yaml.MappingNode
}

// annotate attaches comments to the keys whose dotted path (with [i] for list entries) they name.
func annotate(n *yaml.Node, path string, comments map[string]string) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			if c, ok := comments[p]; ok {
				k.HeadComment = c
			}
			annotate(v, p, comments)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			annotate(c, fmt.Sprintf("%s[%d]", path, i), comments)
		}
	}
}

// Lines renders warnings one a line, as the command prints them on stderr. Paths and messages
// carry names and values of the KubeOne manifest: their control characters are escaped, so
// that a manifest cannot steer the terminal or forge a line.
func Lines(ws []Warning) string {
	var b strings.Builder
	for _, w := range ws {
		b.WriteString("Warning: ")
		b.WriteString(escape.Controls(w.String(), ""))
		b.WriteString("\n")
	}
	return b.String()
}
