package kubeadm

import (
	"bytes"
	"fmt"

	"github.com/slipway-dev/slipway/pkg/yamlfmt"
)

// marshalDocs renders documents as one multi-document YAML file.
func marshalDocs(docs ...any) ([]byte, error) {
	var b bytes.Buffer
	for i, d := range docs {
		out, err := yamlfmt.Marshal(d)
		if err != nil {
			return nil, fmt.Errorf("encoding %T: %w", d, err)
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(out)
	}
	return b.Bytes(), nil
}
