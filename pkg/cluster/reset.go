package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/scripts"
	"github.com/slipway-dev/slipway/pkg/steps"
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
	Out            io.Writer
}

var (
	mdResource      = schema.GroupVersionResource{Group: "cluster.k8s.io", Version: "v1alpha1", Resource: "machinedeployments"}
	machineResource = schema.GroupVersionResource{Group: "cluster.k8s.io", Version: "v1alpha1", Resource: "machines"}
)

// Reset tears the cluster down: worker machines first (so no cloud server is left behind),
// then kubeadm reset and a clean-up of every host, which ends ready for a new apply.
func Reset(ctx context.Context, env *steps.Env, opts ResetOptions) error {
	fmt.Fprintf(opts.Out, "Probing %d hosts...\n", len(env.Nodes))
	if err := probeHosts(ctx, env); err != nil {
		return err
	}
	var names []string
	for _, n := range env.Nodes {
		names = append(names, n.Name)
	}
	fmt.Fprintf(opts.Out, "Reset will destroy cluster %q and wipe Kubernetes from %s.\n", env.Cluster.Name, strings.Join(names, ", "))
	if err := confirm(ApplyOptions{AutoApprove: opts.AutoApprove, Confirm: opts.Confirm}); err != nil {
		return err
	}
	start := time.Now()
	if opts.DestroyWorkers {
		if err := destroyWorkers(ctx, env, opts.Out); err != nil {
			return err
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(env.Nodes))
	for i, n := range env.Nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			script, err := scripts.Reset(env.Facts[n.Name].OS, scripts.ResetParams{Cluster: env.Cluster, RemoveBinaries: opts.RemoveBinaries})
			if err != nil {
				errs[i] = err
				return
			}
			began := time.Now()
			if err := env.Hosts[n.Name].Script(ctx, "reset", script).Run(); err != nil {
				errs[i] = err
				return
			}
			fmt.Fprintf(opts.Out, "[%s] reset done in %s\n", n.Name, time.Since(began).Round(100*time.Millisecond))
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fmt.Fprintf(opts.Out, "Cluster %q reset in %s. %s is stale now; apply creates a new one.\n", env.Cluster.Name, time.Since(start).Round(time.Second), KubeconfigPath(env.Cluster.Name))
	return nil
}

// destroyWorkers deletes the MachineDeployments and waits for every Machine to be gone, so the
// machine-controller releases the cloud servers while it still runs.
func destroyWorkers(ctx context.Context, env *steps.Env, out io.Writer) error {
	if _, err := env.Kube(ctx); err != nil {
		fmt.Fprintf(out, "No cluster answers (%v); no worker machines to delete.\n", err)
		return nil
	}
	c, err := env.WaitAPI(ctx, 30*time.Second)
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
