// Package probe observes a cluster before apply or reset changes anything: every host over SSH
// (its facts and the prerequisites it last ran) and, when a cluster exists, the cluster through
// its API and etcd (version, Nodes, etcd members, the addons slipway applied and the objects of
// addons.path, pending kubelet serving certificate requests, Node metadata that differs from the
// manifest, and the kubelet version of each MachineDeployment). Everything it saw comes back as one Observed value. It
// changes nothing: not the hosts, not the cluster, not the values it was given.
package probe

import (
	"context"
	"io"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/slipway-dev/slipway/pkg/access"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/scripts"
	"github.com/slipway-dev/slipway/pkg/ssh"
)

// Input is what a probe reads.
type Input struct {
	// Nodes are the manifest's hosts (inventory.Nodes); they are not changed.
	Nodes []*inventory.Node
	// SSH reaches each node's target.
	SSH ssh.Hosts
	// API reaches the running cluster; All uses it, Hosts does not.
	API *access.Cluster
	// Parallel bounds how many hosts are probed at once (0: ssh.DefaultParallel).
	Parallel int
	// Log receives what the probe waits for, when it waits.
	Log io.Writer
	// AddonSet names the user addon set whose objects All lists (the cluster's name; "" lists
	// none), and AddonKinds are the kinds addons.path renders now, listed besides the recorded
	// ones.
	AddonSet   string
	AddonKinds []schema.GroupVersionKind
}

// Observed is what a probe saw. Nothing changes it after the probe returns: callers read it.
type Observed struct {
	// Nodes are copies of the input's nodes with their node names settled: a host without a
	// hostname in the manifest is named after its own hostname, lowercased.
	Nodes []*inventory.Node
	// Facts are what each host reported, by node name.
	Facts map[string]scripts.Facts
	// State is what planning compares with the desired state. A probe of the hosts alone
	// (Hosts) leaves State.Cluster empty.
	State plan.Observed
}

// All probes every host and then the running cluster, if there is one. A host that cannot be
// reached, cannot run commands as root or runs an unsupported OS is an error, returned before
// anything is changed anywhere.
func All(ctx context.Context, in Input) (*Observed, error) {
	o, err := Hosts(ctx, in)
	if err != nil {
		return nil, err
	}
	cs, err := clusterState(ctx, in, o)
	if err != nil {
		return nil, err
	}
	o.State.Cluster = *cs
	if o.State.Encryption, err = encryptionState(ctx, in, o.Nodes); err != nil {
		return nil, err
	}
	return o, nil
}
