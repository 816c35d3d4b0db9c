package cluster

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/slipway-dev/slipway/pkg/access"
	"github.com/slipway-dev/slipway/pkg/internal/plural"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/probe"
	"github.com/slipway-dev/slipway/pkg/scripts"
	"github.com/slipway-dev/slipway/pkg/ssh"
	"github.com/slipway-dev/slipway/pkg/workers"
)

// ResetOptions are reset's flags.
type ResetOptions struct {
	// DestroyWorkers deletes the MachineDeployments and waits for their Machines (and cloud
	// servers) to go before the control plane is torn down.
	DestroyWorkers bool
	// RemoveBinaries uninstalls what slipway installed.
	RemoveBinaries bool
	AutoApprove    bool
	Confirm        func(question string) (bool, error)
	// Parallel bounds how many hosts are probed and reset at once.
	Parallel int
	Out      io.Writer
}

var (
	mdResource      = schema.GroupVersionResource{Group: "cluster.k8s.io", Version: "v1alpha1", Resource: "machinedeployments"}
	machineResource = schema.GroupVersionResource{Group: "cluster.k8s.io", Version: "v1alpha1", Resource: "machines"}
)

// Reset tears the cluster down: worker machines first (so no cloud server is left behind),
// then kubeadm reset and a clean-up of every host, which ends ready for a new apply. It holds
// the apply lock throughout, so that it never runs beside an apply.
func Reset(ctx context.Context, t *Target, opts ResetOptions) (err error) {
	ctx, unlock, err := lockLeader(ctx, t, opts.Out)
	if err != nil {
		return err
	}
	defer unlock()
	defer func() { err = lockLostCause(ctx, err) }()
	fmt.Fprintf(opts.Out, "Probing %s...\n", plural.Count(len(t.Nodes), "host"))
	observed, err := probe.Hosts(ctx, probe.Input{Nodes: t.Nodes, SSH: t.SSH, Parallel: opts.Parallel})
	if err != nil {
		return err
	}
	var names []string
	for _, n := range observed.Nodes {
		names = append(names, n.Name)
	}
	fmt.Fprintf(opts.Out, "Reset will destroy cluster %q and wipe Kubernetes from %s.\n", t.Manifest.Name, strings.Join(names, ", "))
	if err := confirm(opts.AutoApprove, opts.Confirm); err != nil {
		return err
	}
	start := time.Now()
	if opts.DestroyWorkers {
		if err := destroyWorkers(ctx, access.New(observed.Nodes, t.SSH, t.Manifest.APIEndpoint), opts.Out); err != nil {
			return err
		}
	}
	var outMu sync.Mutex // hosts finish at once; keep their lines whole
	err = ssh.Each(ctx, observed.Nodes, opts.Parallel, func(ctx context.Context, n *inventory.Node) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
		script, err := scripts.Reset(observed.Facts[n.Name].OS, scripts.ResetParams{Cluster: t.Manifest, RemoveBinaries: opts.RemoveBinaries})
		if err != nil {
			return err
		}
		began := time.Now()
		if err := t.SSH.Host(n.Target).Script(ctx, "reset", script).Run(); err != nil {
			return err
		}
		outMu.Lock()
		defer outMu.Unlock()
		fmt.Fprintf(opts.Out, "[%s] reset done in %s\n", n.Name, time.Since(began).Round(100*time.Millisecond))
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.Out, "Cluster %q reset in %s. %s is stale now; apply creates a new one.\n", t.Manifest.Name, time.Since(start).Round(time.Second), KubeconfigPath(t.Manifest.Name))
	return nil
}

// destroyWorkers deletes the MachineDeployments and waits for every Machine to be gone, so the
// machine-controller releases the cloud servers while it still runs.
func destroyWorkers(ctx context.Context, api *access.Cluster, out io.Writer) error {
	if _, err := api.Kube(ctx); err != nil {
		fmt.Fprintf(out, "No cluster answers (%v); no worker machines to delete.\n", err)
		return nil
	}
	c, err := api.WaitAPI(ctx, 30*time.Second)
	if err != nil {
		fmt.Fprintf(out, "The cluster does not answer; no worker machines to delete: %v\n", err)
		return nil
	}
	mds := c.Dynamic.Resource(mdResource).Namespace(workers.Namespace)
	list, err := mds.List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) || (err == nil && len(list.Items) == 0) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("listing MachineDeployments: %w", err)
	}
	for _, md := range list.Items {
		if err := mds.Delete(ctx, md.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting MachineDeployment %s: %w", md.GetName(), err)
		}
		fmt.Fprintf(out, "Deleted MachineDeployment %s\n", md.GetName())
	}
	return kube.Wait(ctx, "every worker Machine to be deleted (the machine-controller drains them and deletes their servers)", 20*time.Minute, func(ctx context.Context) (bool, string, error) {
		ms, err := c.Dynamic.Resource(machineResource).Namespace(workers.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		var left []string
		for _, m := range ms.Items {
			left = append(left, m.GetName())
		}
		return len(left) == 0, fmt.Sprintf("%d Machines left: %s", len(left), strings.Join(left, ", ")), nil
	})
}
