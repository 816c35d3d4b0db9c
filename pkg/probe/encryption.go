package probe

import (
	"context"
	"fmt"

	"github.com/slipway-dev/slipway/pkg/access"
	"github.com/slipway-dev/slipway/pkg/encryption"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// encryptionState reads what every control plane holds of the encryption of Secrets at rest:
// its encryption configuration file, known by hash, and whether its API server reads it. The
// source's file (the first control plane's that has one, in inventory.Nodes' order, which puts
// the leader first: the rule phases' sourceConfig follows) is read through
// to say, by key names, what it holds and whether a rotation is under way. The keys pass
// through memory only: what comes back names keys and hashes.
func encryptionState(ctx context.Context, in Input, nodes []*inventory.Node) (plan.EncryptionState, error) {
	st := plan.EncryptionState{Files: map[string]string{}}
	var source []byte
	for _, n := range nodes {
		if n.Role != plan.ControlPlane {
			continue
		}
		e, err := access.ReadEncryption(ctx, in.SSH.Host(n.Target))
		if err != nil {
			return st, fmt.Errorf("reading the encryption configuration of %s: %w", n.Name, err)
		}
		if e.Configured {
			st.Configured = append(st.Configured, n.Name)
		}
		if e.Data == nil {
			continue
		}
		st.Files[n.Name] = encryption.Hash(e.Data)
		if st.Source == "" {
			st.Source, source = n.Name, e.Data
		}
	}
	if st.Source == "" {
		return st, nil
	}
	c, err := encryption.Parse(source)
	if err != nil {
		return st, fmt.Errorf("%s: %w", st.Source, err)
	}
	st.Holds, st.Pending = c.Describe(), encryption.Reason(c)
	return st, nil
}
