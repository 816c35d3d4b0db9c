package phases

import (
	"context"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/pools"
	"github.com/slipway-dev/slipway/pkg/workers"
)

// DefaultPoolTimeout is how long apply waits for the worker pools unless told otherwise
// (--pools-timeout): a server build, its boot and a kubeadm join, with room to spare.
const DefaultPoolTimeout = 10 * time.Minute

// The wait-pools phase waits until every worker pool of the manifest has its replicas of
// Machines, each a Ready Node, printing each Machine's progress (server ACTIVE, address, Node
// registered, Ready) with the time it took. When it gives up it names each Machine that did not
// make it, with its phase, its conditions and the tail of its server's console log, read from
// the cloud with the operator's OpenStack credentials.
var _ = register(Phase{
	Name:  plan.StepWaitPools,
	Short: "wait until every worker pool's Machines are Ready Nodes",
	Run:   func(ctx context.Context, r *Run, _ string) error { return waitPools(ctx, r, workers.Namespace) },
})

// waitPoolsRun is what waiting for the worker pools reads of a run.
type waitPoolsRun interface {
	api
	logger
	Rendered() Rendered
	PoolTimeout() time.Duration
	// Console returns a reader of pool Machines' console logs, or why there can be none.
	Console(ctx context.Context, c *kube.Client) (pools.Console, error)
}

func waitPools(ctx context.Context, r waitPoolsRun, namespace string) error {
	names, err := PoolNames(r.Rendered())
	if err != nil {
		return err
	}
	c, err := r.Kube(ctx)
	if err != nil {
		return err
	}
	// The cloud is reached only for a timeout's console logs, so a run that needs none never
	// needs the cloud's credentials.
	var cloud pools.Console
	console := func(ctx context.Context, m *v1alpha1.Machine, lines int) (string, error) {
		if cloud == nil {
			var err error
			if cloud, err = r.Console(ctx, c); err != nil {
				return "", fmt.Errorf("no client for the cloud: %w", err)
			}
		}
		return cloud(ctx, m, lines)
	}
	res, err := pools.Wait(ctx, c, namespace, names, pools.Options{
		Timeout:  r.PoolTimeout(),
		Progress: func(machine, line string) { r.Logf(machine, "%s", line) },
		Console:  console,
	})
	if err != nil {
		return err
	}
	for _, p := range res {
		r.Logf("", "pool %s: %d of %d Machines Ready", p.Name, p.Ready, p.Replicas)
	}
	return nil
}

// PoolNames are the names of the worker pools the run applies, in the manifest's order.
func PoolNames(rendered Rendered) ([]string, error) {
	objs, err := kube.Decode(rendered.MachineDeployments)
	if err != nil {
		return nil, fmt.Errorf("machine-deployments manifests: %w", err)
	}
	names := []string{}
	for _, o := range objs {
		if o.GetKind() == "MachineDeployment" {
			names = append(names, o.GetName())
		}
	}
	return names, nil
}

// PoolTimeout is how long the wait-pools phase waits.
func (r *Run) PoolTimeout() time.Duration {
	if r.cfg.PoolTimeout <= 0 {
		return DefaultPoolTimeout
	}
	return r.cfg.PoolTimeout
}

// Console reads console logs with the operator's OpenStack credentials (the OS_* variables).
func (r *Run) Console(ctx context.Context, c *kube.Client) (pools.Console, error) {
	return OpenStackConsole(ctx, c, r.cfg.Manifest.Name, os.LookupEnv)
}

// OpenStackConsole reads console logs from the OpenStack cloud that lookupEnv's OS_* variables
// describe, as the machine-controller of cluster clusterName (on c) would reach it.
func OpenStackConsole(ctx context.Context, c *kube.Client, clusterName string, lookupEnv func(string) (string, bool)) (pools.Console, error) {
	ns, err := c.Kube.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading the cluster's UID: %w", err)
	}
	pol, err := openstack.PolicyFromEnv(lookupEnv)
	if err != nil {
		return nil, err
	}
	p, err := openstack.New(clusterName, openstack.Options{ClusterUID: string(ns.UID), Policy: pol, LookupEnv: lookupEnv})
	if err != nil {
		return nil, err
	}
	return p.Console, nil
}
