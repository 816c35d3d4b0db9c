package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/scripts"
	"github.com/slipway-dev/slipway/pkg/ssh"
	"github.com/slipway-dev/slipway/pkg/steps"
)

// Probe inspects every host in parallel and then the running cluster, if there is one. Any
// host that cannot be reached, cannot run commands as root or runs an unsupported OS is an
// error, returned before anything is changed anywhere.
func Probe(ctx context.Context, env *steps.Env) (*plan.Observed, error) {
	if err := probeHosts(ctx, env); err != nil {
		return nil, err
	}
	o := &plan.Observed{}
	for _, n := range env.Nodes {
		o.Hosts = append(o.Hosts, hostState(n, env.Facts[n.Name], env.PrereqHashes[n.Name]))
	}
	cs, err := probeCluster(ctx, env)
	if err != nil {
		return nil, err
	}
	o.Cluster = *cs
	return o, nil
}

func probeHosts(ctx context.Context, env *steps.Env) error {
	var mu sync.Mutex
	errs := make([]error, len(env.Nodes))
	facts := map[string]*steps.Facts{}
	prereq := map[string]string{}
	var wg sync.WaitGroup
	for i, n := range env.Nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := n.Name
			out, err := env.Hosts[key].Script(ctx, "probe", scripts.Probe()).Output()
			if err != nil {
				errs[i] = err
				return
			}
			f, err := scripts.ParseProbe(string(out))
			if err != nil {
				errs[i] = fmt.Errorf("%s: %w", key, err)
				return
			}
			hash, err := env.Hosts[key].Script(ctx, "read the prerequisites hash", "cat "+steps.PrereqHashFile+" 2>/dev/null || true").Output()
			if err != nil {
				errs[i] = err
				return
			}
			prereq[key] = strings.TrimSpace(string(hash))
			if err := checkHost(n, &f); err != nil {
				errs[i] = fmt.Errorf("%s: %w", key, err)
				return
			}
			mu.Lock()
			facts[key] = &f
			mu.Unlock()
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("probing hosts (nothing was changed): %w", err)
	}
	// Hosts without a hostname in the manifest are named after their own hostname.
	hosts := map[string]ssh.Host{}
	env.Facts = map[string]*steps.Facts{}
	env.PrereqHashes = map[string]string{}
	seen := map[string]string{}
	for _, n := range env.Nodes {
		key := n.Name
		if n.Provisional {
			n.Name, n.Provisional = strings.ToLower(facts[key].Hostname), false
		}
		if prev, dup := seen[n.Name]; dup {
			return fmt.Errorf("hosts %s and %s both have the node name %q; set distinct hostnames in the manifest", prev, n.Target.Address, n.Name)
		}
		seen[n.Name] = n.Target.Address
		hosts[n.Name] = env.Hosts[key]
		env.Facts[n.Name] = facts[key]
		env.PrereqHashes[n.Name] = prereq[key]
	}
	env.Hosts = hosts
	return nil
}

// checkHost refuses hosts slipway cannot manage.
func checkHost(n *inventory.Node, f *steps.Facts) error {
	if _, err := scripts.FamilyOf(f.OS); err != nil {
		return err
	}
	if _, err := f.GoArch(); err != nil {
		return err
	}
	if !f.SudoOK {
		return fmt.Errorf("user %s cannot run commands as root without a password; configure passwordless sudo or log in as root", n.Target.User)
	}
	return nil
}

func hostState(n *inventory.Node, f *steps.Facts, prereqHash string) plan.HostState {
	return plan.HostState{
		Name: n.Name, Address: n.Target.Address, Role: n.Role, Leader: n.Host.IsLeader,
		OS: f.OS.ID + " " + f.OS.VersionID, Arch: f.Arch,
		ContainerdVersion: f.ContainerdVersion, ContainerdActive: f.ContainerdActive,
		KubeletVersion: f.KubeletVersion, KubeletActive: f.KubeletActive, KubeadmVersion: f.KubeadmVersion,
		Joined: f.KubeletConf, AdminConf: f.AdminConf, EtcdData: f.EtcdData,
		CertExpiry: f.APIServerCertExpiry, SwapActive: f.SwapActive, PrereqHash: prereqHash,
	}
}

// Waits for an API that does not answer during probing. An API restarting (kubeadm upgrade
// replaces its static pod, a kubelet upgrade restarts it) is back within a minute or two.
var (
	// establishedAPIWait is how long a cluster that hosts have joined may take to answer.
	establishedAPIWait = 5 * time.Minute
	// initAPIWait is how long a leader whose init may have been interrupted may take.
	initAPIWait = time.Minute
)

// probeCluster reads the running cluster through the first control plane with an admin
// kubeconfig. No such host means there is no cluster yet. An API that does not answer means an
// interrupted init when only the leader has a kubelet kubeconfig; when more hosts have one, the
// cluster exists and is unavailable right now, and apply stops rather than plan a new init.
func probeCluster(ctx context.Context, env *steps.Env) (*plan.ClusterState, error) {
	cs := &plan.ClusterState{Nodes: map[string]*plan.NodeState{}}
	anyAdmin := false
	var joined []string
	for _, n := range env.Nodes {
		anyAdmin = anyAdmin || (n.Role == plan.ControlPlane && env.Facts[n.Name].AdminConf)
		if env.Facts[n.Name].KubeletConf {
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
	c, err := env.Kube(ctx)
	if err != nil {
		return nil, err
	}
	if err := c.Healthy(ctx, 15*time.Second); err != nil {
		if env.Log != nil {
			fmt.Fprintf(env.Log, "The Kubernetes API does not answer yet (%v); waiting up to %s...\n", err, wait)
		}
		if _, err := env.WaitAPI(ctx, wait); err != nil {
			if established {
				return nil, fmt.Errorf("%s have joined a cluster whose API does not answer, so apply will not start a new one: %w; "+
					"check the control planes (crictl ps -a, journalctl -u kubelet) and run apply again", strings.Join(joined, ", "), err)
			}
			return cs, nil
		}
	}
	cs.Exists = true
	cm, err := c.Kube.CoreV1().ConfigMaps("kube-system").Get(ctx, "kubeadm-config", metav1.GetOptions{})
	if err != nil {
		// Init was interrupted before kubeadm uploaded its configuration.
		cs.Exists = false
		return cs, nil
	}
	var cc struct {
		KubernetesVersion string `yaml:"kubernetesVersion"`
	}
	if err := yaml.Unmarshal([]byte(cm.Data["ClusterConfiguration"]), &cc); err != nil || cc.KubernetesVersion == "" {
		return nil, fmt.Errorf("reading the cluster version from kubeadm-config: %v", err)
	}
	cs.Version = cc.KubernetesVersion
	nodes, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		_, cp := n.Labels["node-role.kubernetes.io/control-plane"]
		ns := &plan.NodeState{Name: n.Name, KubeletVersion: n.Status.NodeInfo.KubeletVersion, Ready: steps.NodeReady(n), ControlPlane: cp}
		for _, a := range n.Status.Addresses {
			if a.Type == "InternalIP" {
				ns.InternalIP = a.Address
			}
		}
		cs.Nodes[n.Name] = ns
	}
	if cs.Addons, err = steps.AppliedAddons(ctx, c); err != nil {
		return nil, err
	}
	ec, err := env.Etcd(ctx)
	if err != nil {
		return nil, err
	}
	defer ec.Close()
	members, err := ec.Members(ctx)
	if err != nil {
		return nil, err
	}
	cs.Etcd = steps.EtcdMembers(members)
	return cs, nil
}
