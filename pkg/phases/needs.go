package phases

import (
	"context"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/kube"
)

// The small views of a Run from which each phase composes the interface it reads the run
// through. *Run implements them all; the compiler checks it where each phase is registered.
type (
	// nodes finds a host of the run by node name.
	nodes interface {
		Node(name string) (Node, error)
	}
	// manifest is the cluster's manifest, read-only.
	manifest interface {
		Manifest() *v1beta1.Cluster
	}
	// api is the running cluster's API.
	api interface {
		Kube(ctx context.Context) (*kube.Client, error)
	}
	// logger reports what a phase changed.
	logger interface {
		Logf(host, format string, args ...any)
	}
)

// nodeAndKube returns the host named host and the cluster's API client: what every phase
// that works on one host's Node needs first.
func nodeAndKube(ctx context.Context, r interface {
	nodes
	api
}, host string) (Node, *kube.Client, error) {
	n, err := r.Node(host)
	if err != nil {
		return Node{}, nil, err
	}
	c, err := r.Kube(ctx)
	if err != nil {
		return Node{}, nil, err
	}
	return n, c, nil
}
