package phases

import (
	"context"
	"fmt"
	"io"
	"maps"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/slipway-dev/slipway/pkg/access"
	"github.com/slipway-dev/slipway/pkg/addons"
	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/etcd"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/progress"
	"github.com/slipway-dev/slipway/pkg/scripts"
	"github.com/slipway-dev/slipway/pkg/ssh"
)

// Config is what one apply run's phases work from.
type Config struct {
	// Manifest is the cluster as loaded, merged, defaulted and validated.
	Manifest *v1beta1.Cluster
	// Nodes are the hosts as the probe settled them (probe.Observed.Nodes), and Facts what each
	// reported, by node name.
	Nodes []*inventory.Node
	Facts map[string]scripts.Facts
	// SSH reaches each node's target.
	SSH ssh.Hosts
	// API reaches the running cluster.
	API *access.Cluster
	// Rendered is what the manifest rendered for the phases that install it.
	Rendered Rendered
	// Log receives the progress of every step and what the phases changed, a line at a time
	// even when phases run at once.
	Log io.Writer
	// Secrets are hidden from verbose output and errors; the phases add the bootstrap tokens
	// and certificate keys they create. Nil hides nothing.
	Secrets *ssh.Secrets
	// PoolTimeout bounds the wait for the worker pools (0: DefaultPoolTimeout).
	PoolTimeout time.Duration
	// Restore is what apply --restore-from makes the cluster again from; nil otherwise.
	Restore *Restore
}

// Rendered is what the manifest rendered for this run: exactly what the plan's hashes were
// computed from, so a phase installs what the plan compared.
type Rendered struct {
	// PrereqScripts are the prerequisites scripts by node name. They may hold registry
	// credentials: never log them.
	PrereqScripts map[string]string
	// PrereqRecords are what each host records after running its script (applied.HostRecord),
	// by node name.
	PrereqRecords map[string]string
	// CNI holds the CNI's manifests, empty when the manifest brings its own CNI.
	CNI []byte
	// MachineDeployments are the manifest's worker pools, and KubeletBumps the kubelet-only
	// partial MachineDeployments of pools the manifest does not declare.
	MachineDeployments, KubeletBumps []byte
	// SnapshotScripts are, by control plane, the scripts that set up its scheduled etcd
	// snapshots or remove them, and SnapshotRecords the hashes to record after ("" for a
	// removal).
	SnapshotScripts, SnapshotRecords map[string]string
	// MachineControllerHash is the machine-controller's hash that the plan compared.
	MachineControllerHash string
	// NodeSettings are the cluster-wide settings of pool machines (bootstrap.Settings, encoded),
	// which the machine-controller step writes into the cluster. They may hold registry
	// credentials: never log them.
	NodeSettings []byte
	// NodeCredentials are what of NodeSettings is secret (bootstrap.Credentials), which the
	// machine-controller step writes into the Secret that pool machines fetch with their
	// bootstrap token, and nobody else may read; empty without registry credentials or proxy.
	// Never log them.
	NodeCredentials map[string][]byte
	// CloudController holds the OpenStack cloud-controller-manager's objects, its cloud.conf
	// Secret first, and CloudControllerHash their hash that the plan compared. The Secret holds
	// the OpenStack credentials, and CloudControllerSecrets the values among them to hide from
	// output and errors: never log the objects.
	CloudController        []*unstructured.Unstructured
	CloudControllerHash    string
	CloudControllerSecrets []string
	// UserAddons are the objects of addons.path (addons.RenderSet), in the folder's order; the
	// plan compared their hashes. They may hold Secrets: never log their content.
	UserAddons []addons.Object
}

// Run is what the phases of one apply run share. NewRun builds it, and nothing changes it
// afterwards except the join credentials, which the first join (or init) sets under their
// lock, and the API client that access.Cluster keeps. Phases read it through narrow
// interfaces of their own.
type Run struct {
	cfg  Config
	join joinCredentials

	logMu sync.Mutex // keeps lines whole on cfg.Log, and guards step
	step  string     // the step (or group of parallel steps of one name) running now
}

// NewRun returns the shared state of a run. It keeps its own copies of cfg's maps and slices,
// so its caller may do as it likes with them.
func NewRun(cfg Config) *Run {
	cfg.Nodes = append([]*inventory.Node(nil), cfg.Nodes...)
	cfg.Facts = maps.Clone(cfg.Facts)
	cfg.Rendered.PrereqScripts = maps.Clone(cfg.Rendered.PrereqScripts)
	cfg.Rendered.PrereqRecords = maps.Clone(cfg.Rendered.PrereqRecords)
	cfg.Rendered.SnapshotScripts = maps.Clone(cfg.Rendered.SnapshotScripts)
	cfg.Rendered.SnapshotRecords = maps.Clone(cfg.Rendered.SnapshotRecords)
	cfg.Rendered.NodeCredentials = maps.Clone(cfg.Rendered.NodeCredentials)
	return &Run{cfg: cfg}
}

// Node is one host of the run: its manifest entry, what it reported, and SSH to it.
type Node struct {
	*inventory.Node
	Facts scripts.Facts
	SSH   ssh.Host
}

// Node returns the host whose node name is name.
func (r *Run) Node(name string) (Node, error) {
	for _, n := range r.cfg.Nodes {
		if n.Name == name {
			return Node{Node: n, Facts: r.cfg.Facts[name], SSH: r.cfg.SSH.Host(n.Target)}, nil
		}
	}
	return Node{}, fmt.Errorf("no host named %q in the manifest", name)
}

// Nodes returns every host, leader first, then control planes, then static workers.
func (r *Run) Nodes() []*inventory.Node { return r.cfg.Nodes }

// Leader returns the leader.
func (r *Run) Leader() (Node, error) {
	l := inventory.Leader(r.cfg.Nodes)
	if l == nil {
		return Node{}, fmt.Errorf("the manifest has no leader")
	}
	return r.Node(l.Name)
}

// hide keeps secrets the run creates out of verbose output and errors.
func (r *Run) hide(values ...string) { r.cfg.Secrets.Add(values...) }

// Manifest is the cluster's manifest. Phases only read it.
func (r *Run) Manifest() *v1beta1.Cluster { return r.cfg.Manifest }

// Rendered is what the manifest rendered for this run.
func (r *Run) Rendered() Rendered { return r.cfg.Rendered }

// Kube returns the cluster's API client.
func (r *Run) Kube(ctx context.Context) (*kube.Client, error) { return r.cfg.API.Kube(ctx) }

// WaitAPI waits until the API answers.
func (r *Run) WaitAPI(ctx context.Context, timeout time.Duration) (*kube.Client, error) {
	return r.cfg.API.WaitAPI(ctx, timeout)
}

// Reconnect drops the API client after the cluster was initialised: the next Kube reads the
// new admin kubeconfig.
func (r *Run) Reconnect() { r.cfg.API.Forget() }

// Etcd connects to the cluster's etcd; the caller closes the client.
func (r *Run) Etcd(ctx context.Context) (*etcd.Client, error) { return r.cfg.API.Etcd(ctx) }

// Logf writes a line about what a phase changed, under the step's progress line.
func (r *Run) Logf(host, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	prefix := ""
	if host != "" {
		prefix = "[" + host + "] "
	}
	r.log(progress.Entry{Host: host, Message: msg}, "         "+prefix+msg+"\n")
}

// log writes one progress entry (text, the line a person reads) to the log, one whole write
// at a time; an entry without a step is the running step's.
func (r *Run) log(e progress.Entry, text string) {
	if r.cfg.Log == nil {
		return
	}
	r.logMu.Lock()
	defer r.logMu.Unlock()
	if e.Step == "" {
		e.Step = r.step
	}
	progress.Log(r.cfg.Log, e, text)
}

// running records the step that runs now, which Logf's entries name.
func (r *Run) running(step string) {
	r.logMu.Lock()
	r.step = step
	r.logMu.Unlock()
}
