package plan

import (
	"fmt"

	"github.com/Masterminds/semver/v3"

	"github.com/slipway-dev/slipway/pkg/kubeversion"
)

// Step names. They are stable: users see them in plans and progress output, --output json
// carries them, and tests choose where to interrupt apply by name. Each names a phase that the
// phases package defines, with what it does, in a file of its own.
const (
	StepPrerequisites     = "prerequisites"
	StepAdoptHost         = "adopt-host"
	StepAdoptCNI          = "adopt-cni"
	StepInstall           = "install-kubernetes"
	StepInit              = "kubeadm-init"
	StepInitFinish        = "kubeadm-init-finish"
	StepRestoreEtcd       = "restore-etcd"
	StepRestoreFinish     = "restore-finish"
	StepRepair            = "remove-stale-member"
	StepJoinControlPlane  = "join-control-plane"
	StepJoinWorker        = "join-worker"
	StepCNI               = "cni"
	StepApproveCSRs       = "approve-csrs"
	StepNodeMetadata      = "node-metadata"
	StepUpgradePreflight  = "upgrade-preflight"
	StepContainerd        = "containerd"
	StepUpgradeLeader     = "upgrade-control-plane-leader"
	StepUpgradeNode       = "upgrade-node"
	StepImportImages      = "import-images"
	StepCloudController   = "cloud-controller-manager"
	StepMachineController = "machine-controller"
	StepMachineDeployment = "machine-deployments"
	StepWaitReady         = "wait-nodes-ready"
	StepWaitPools         = "wait-pools"
	StepEncryptionConfig  = "encryption-config"
	StepEncryptionServer  = "encryption-apiserver"
	StepEncryptSecrets    = "encrypt-secrets"
	StepRotateKey         = "rotate-encryption-key"
	StepEtcdSnapshots     = "etcd-snapshots"
	StepAddonsDryRun      = "addons-dry-run"
	StepAddons            = "addons"
)

// Names lists every step name a plan can hold. The phases package defines a phase for each,
// and its test checks that none is missing.
var Names = []string{
	StepUpgradePreflight, StepAddonsDryRun, StepPrerequisites, StepAdoptHost, StepInstall, StepRestoreEtcd, StepInit, StepInitFinish, StepRestoreFinish, StepCNI, StepAdoptCNI, StepRepair,
	StepJoinControlPlane, StepJoinWorker, StepContainerd, StepUpgradeLeader, StepUpgradeNode, StepApproveCSRs,
	StepNodeMetadata, StepWaitReady, StepImportImages, StepCloudController, StepMachineController,
	StepMachineDeployment, StepAddons, StepWaitPools, StepEncryptionConfig, StepEncryptionServer, StepEncryptSecrets, StepRotateKey, StepEtcdSnapshots,
}

// Step is one unit of work, on one host or (Host == "") on the cluster.
type Step struct {
	Name   string `json:"name"`
	Host   string `json:"host,omitempty"`
	Reason string `json:"reason"`
	// Parallel steps of the same name run at once, across hosts; others run one at a time.
	Parallel bool `json:"parallel,omitempty"`
}

func (s Step) String() string {
	if s.Host == "" {
		return s.Name
	}
	return s.Name + " on " + s.Host
}

// Plan is what apply will do.
type Plan struct {
	Steps []Step `json:"steps"`
	// Warnings are problems that do not stop apply, such as a broken host that needs a
	// manual, quorum-safe replacement.
	Warnings []string `json:"warnings,omitempty"`
	// Addons lists what the addons step does to the user addon set (addons.path); nil when
	// the plan has no such step.
	Addons *AddonChanges `json:"addons,omitempty"`
	// Pools lists, per worker pool, where the live MachineDeployment differs from the manifest's
	// and what apply does about each difference.
	Pools []PoolChange `json:"poolChanges,omitempty"`
}

// Empty reports whether there is nothing to do.
func (p *Plan) Empty() bool { return len(p.Steps) == 0 }

// Error is a plan that must not run, with the reason.
type Error struct{ Reason string }

func (e *Error) Error() string { return e.Reason }

// Build compares desired and observed state and returns the steps that converge them, in the
// order apply runs them. It reads nothing but its arguments. Each stage below adds its steps,
// each with the host it runs on and the reason it is needed; a stage with nothing to do adds
// nothing, so a converged cluster gets an empty plan.
func Build(d Desired, o Observed) (*Plan, error) {
	if d.Restore {
		if err := checkRestore(d, o); err != nil {
			return nil, err
		}
	}
	b, err := newBuilder(d, o)
	if err != nil {
		return nil, err
	}
	b.upgradePreflight() // an upgrade is checked before anything changes on a host
	b.addonsDryRun()     // so are the objects of addons.path, by the API server
	b.prerequisites()    // swap, modules, sysctls, containerd, where missing or changed; hosts of another tool adopted
	b.binaries()         // kubeadm, kubelet, kubectl at the version, on hosts not yet joined
	b.initialise()       // kubeadm init on the leader (on etcd restored from a snapshot), or the rest of an interrupted init
	err = b.joins()      // the CNI, stale members removed, control planes one by one, workers
	if err != nil {
		return nil, err
	}
	b.containerdMoves()                    // joined nodes whose containerd is too old for the version, one at a time
	b.upgrades()                           // the leader's kubeadm upgrade apply, then every node in upgradeIndex order
	if err := b.encryption(); err != nil { // Secrets encrypted at rest, API servers one at a time; a key rotation
		return nil, err
	}
	b.snapshots()                     // the control planes' timers of scheduled etcd snapshots, where they differ from the manifest's
	b.nodes()                         // serving certificates approved, Node metadata, every node Ready
	b.images()                        // machineController.imageArchive into the control planes' containerd
	b.addons()                        // the cloud-controller-manager, the machine-controller, then the MachineDeployments
	b.userAddons()                    // the objects of addons.path added and changed, those that left it pruned
	if err := b.pools(); err != nil { // drift of the worker pools applied back; every pool's Machines Ready Nodes
		return nil, err
	}
	return b.plan, nil
}

// builder holds what the stages of Build share: the inputs, indexed, and the plan so far.
type builder struct {
	d         Desired
	o         Observed
	hosts     map[string]HostState // observed, by name
	leader    DesiredHost
	upgrading bool // the cluster runs an older version than desired
	// containerd is the containerd policy of the desired version; moves are the joined hosts
	// whose containerd is older than its minimum, with the reason.
	containerd kubeversion.Containerd
	moves      map[string]string
	joining    bool // a host joins, or the cluster is created
	// addonChanges is what the user addon set needs, nil for nothing.
	addonChanges *AddonChanges
	plan         *Plan
}

func newBuilder(d Desired, o Observed) (*builder, error) {
	want, err := semver.StrictNewVersion(d.Version)
	if err != nil {
		return nil, fmt.Errorf("desired version %q: %w", d.Version, err)
	}
	b := &builder{d: d, o: o, hosts: map[string]HostState{}, leader: leaderOf(d.Hosts), plan: &Plan{}, moves: map[string]string{},
		addonChanges: userAddonChanges(d, o)}
	for _, h := range o.Hosts {
		b.hosts[h.Name] = h
	}
	if b.containerd, err = kubeversion.ContainerdFor(want.Minor()); err != nil {
		return nil, err
	}
	for _, dh := range d.Hosts {
		if h := b.hosts[dh.Name]; h.Joined {
			if reason := containerdTooOld(h.ContainerdVersion, b.containerd); reason != "" {
				b.moves[dh.Name] = reason
			}
		}
	}
	if o.Cluster.Exists {
		if err := checkUpgrade(o.Cluster.Version, want); err != nil {
			return nil, err
		}
		have, _ := semver.NewVersion(o.Cluster.Version)
		b.upgrading = have != nil && have.LessThan(want)
	}
	return b, nil
}

func (b *builder) add(name, host, reason string, parallel bool) {
	b.plan.Steps = append(b.plan.Steps, Step{Name: name, Host: host, Reason: reason, Parallel: parallel})
}
