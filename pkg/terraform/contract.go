package terraform

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/slipway-dev/slipway/pkg/internal/bounded"
)

// keepContract blanks out every output that is not slipway's (not named slipway_*, nor one of
// the four KubeOne outputs slipway also reads) so that
// parsing builds nodes only for slipway's outputs, whatever else the user's Terraform prints:
// each such value becomes 0 followed by spaces, its line breaks kept, so that line numbers in
// errors still match the input. slipway's own outputs may total at most MaxContractBytes.
// Input that is not a JSON object is passed on as it is when it is small enough to parse, so
// that the parser names what is wrong with it.
func keepContract(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return notAnObject(data)
	}
	out := bytes.Clone(data)
	var contract int64
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return notAnObject(data)
		}
		name, _ := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return notAnObject(data)
		}
		end := dec.InputOffset()
		start := end - int64(len(value))
		if strings.HasPrefix(name, "slipway_") || isKubeOneOutput(name) {
			contract += int64(len(value))
			continue
		}
		for i := start; i < end; i++ {
			if out[i] != '\n' && out[i] != '\r' {
				out[i] = ' '
			}
		}
		out[start] = '0'
	}
	if _, err := dec.Token(); err != nil {
		return notAnObject(data)
	}
	if contract > MaxContractBytes {
		return nil, fmt.Errorf("slipway's outputs (slipway_*, or KubeOne's kubeone_*) are %d bytes, more than the %s slipway reads", contract, bounded.Size(MaxContractBytes))
	}
	return out, nil
}

func notAnObject(data []byte) ([]byte, error) {
	if int64(len(data)) > MaxContractBytes {
		return nil, fmt.Errorf("not a JSON object as `terraform output -json` prints, and too large (%d bytes) to say more", len(data))
	}
	return data, nil
}
