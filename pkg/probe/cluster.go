package probe

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/applied"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// Waits for an API that does not answer during probing. An API restarting (kubeadm upgrade
// replaces its static pod, a kubelet upgrade restarts it) is back within a minute or two.
var (
	// establishedAPIWait is how long a cluster that hosts have joined may take to answer.
	establishedAPIWait = 5 * time.Minute
	// initAPIWait is how long a leader whose init may have been interrupted may take.
	initAPIWait = time.Minute
)

// clusterState reads the running cluster through the first control plane with an admin
// kubeconfig. No such host means there is no cluster yet. An API that does not answer means an
// interrupted init when only the leader has a kubelet kubeconfig; when more hosts have one, the
// cluster exists and is unavailable right now, and apply stops rather than plan a new init.
func clusterState(ctx context.Context, in Input, o *Observed) (*plan.ClusterState, error) {
	cs := &plan.ClusterState{Nodes: map[string]*plan.NodeState{}}
	anyAdmin := false
	var joined []string
	for _, n := range o.Nodes {
		anyAdmin = anyAdmin || (n.Role == plan.ControlPlane && o.Facts[n.Name].AdminConf)
		if o.Facts[n.Name].KubeletConf {
			joined = append(joined, n.Name)
		}
	}
	if !anyAdmin {
		return cs, nil
	}
	established := len(joined) > 1
	wait := initAPIWait
	if established {
		wait = establishedAPIWait
	}
	c, err := in.API.Kube(ctx)
	if err != nil {
		return nil, err
	}
	if err := c.Healthy(ctx, 15*time.Second); err != nil {
		if in.Log != nil {
			fmt.Fprintf(in.Log, "The Kubernetes API does not answer yet (%v); waiting up to %s...\n", err, wait)
		}
		if _, err := in.API.WaitAPI(ctx, wait); err != nil {
			if established {
				return nil, fmt.Errorf("%s have joined a cluster whose API does not answer, so apply will not start a new one: %w; "+
					"check the control planes (crictl ps -a, journalctl -u kubelet) and run apply again", strings.Join(joined, ", "), err)
			}
			return cs, nil
		}
	}
	v, found, err := ClusterVersion(ctx, c)
	if !found {
		// Init was interrupted before kubeadm uploaded its configuration.
		return cs, nil
	}
	if err != nil {
		return nil, err
	}
	cs.Exists, cs.Version = true, v
	if cs.Nodes, err = nodes(ctx, c); err != nil {
		return nil, err
	}
	if cs.Addons, err = applied.Addons(ctx, c); err != nil {
		return nil, err
	}
	if in.AddonSet != "" {
		if cs.UserAddons, cs.AddonNamespaced, err = UserAddons(ctx, c, in.AddonSet, in.AddonKinds); err != nil {
			return nil, err
		}
	}
	if cs.CNIs, err = runningCNIs(ctx, c); err != nil {
		return nil, err
	}
	if cs.Etcd, err = etcdMembers(ctx, in); err != nil {
		return nil, err
	}
	if cs.KubeletServingUnsigned, err = kubeletServingUnsigned(ctx, c); err != nil {
		return nil, err
	}
	if cs.PendingCSRs, err = pendingCSRs(ctx, c, o.Nodes); err != nil {
		return nil, err
	}
	if cs.MetadataDrift, err = metadataDrift(ctx, c, o.Nodes); err != nil {
		return nil, err
	}
	if cs.MachineDeploymentKubelets, err = MachineDeploymentKubelets(ctx, c); err != nil {
		return nil, err
	}
	if cs.Pools, err = PoolStates(ctx, c); err != nil {
		return nil, err
	}
	return cs, nil
}

// nodes lists the cluster's Nodes.
func nodes(ctx context.Context, c *kube.Client) (map[string]*plan.NodeState, error) {
	list, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	out := map[string]*plan.NodeState{}
	for i := range list.Items {
		n := &list.Items[i]
		_, cp := n.Labels["node-role.kubernetes.io/control-plane"]
		ns := &plan.NodeState{Name: n.Name, KubeletVersion: n.Status.NodeInfo.KubeletVersion, Ready: kube.NodeReady(n), ControlPlane: cp}
		for _, a := range n.Status.Addresses {
			if a.Type == "InternalIP" {
				ns.InternalIP = a.Address
			}
		}
		out[n.Name] = ns
	}
	return out, nil
}

// kubeletServingUnsigned reports whether kubeadm's kubelet-config ConfigMap leaves
// serverTLSBootstrap off (kubelets with self-signed serving certificates). A cluster without the
// ConfigMap is not kubeadm's and reports false.
func kubeletServingUnsigned(ctx context.Context, c *kube.Client) (bool, error) {
	cm, err := c.Kube.CoreV1().ConfigMaps("kube-system").Get(ctx, "kubelet-config", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading kube-system/kubelet-config: %w", err)
	}
	var kc struct {
		ServerTLSBootstrap bool `yaml:"serverTLSBootstrap"`
	}
	if err := yaml.Unmarshal([]byte(cm.Data["kubelet"]), &kc); err != nil {
		return false, fmt.Errorf("reading kube-system/kubelet-config: %w", err)
	}
	return !kc.ServerTLSBootstrap, nil
}

// ClusterVersion reads the control plane's Kubernetes version from kubeadm's ClusterConfiguration
// (kube-system/kubeadm-config). found is false when the ConfigMap cannot be read: kubeadm init
// did not get as far as uploading it.
func ClusterVersion(ctx context.Context, c *kube.Client) (version string, found bool, err error) {
	cm, err := c.Kube.CoreV1().ConfigMaps("kube-system").Get(ctx, "kubeadm-config", metav1.GetOptions{})
	if err != nil {
		return "", false, nil
	}
	var cc struct {
		KubernetesVersion string `yaml:"kubernetesVersion"`
	}
	if err := yaml.Unmarshal([]byte(cm.Data["ClusterConfiguration"]), &cc); err != nil || cc.KubernetesVersion == "" {
		return "", true, fmt.Errorf("reading the cluster version from kubeadm-config: %v", err)
	}
	return cc.KubernetesVersion, true, nil
}
