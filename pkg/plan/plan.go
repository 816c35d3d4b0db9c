package plan

import (
	"fmt"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// Step names. They are stable: users see them in plans and progress output, --output json
// carries them, and tests choose where to interrupt apply by name.
const (
	StepPrerequisites     = "prerequisites"      // swap, kernel modules, sysctls, containerd
	StepInstall           = "install-kubernetes" // kubeadm, kubelet, kubectl at the exact version
	StepInit              = "kubeadm-init"       // initialise the cluster on the leader
	StepInitFinish        = "kubeadm-init-finish"
	StepRepair            = "remove-stale-member" // drop a stale etcd member and Node before a rejoin
	StepJoinControlPlane  = "join-control-plane"
	StepJoinWorker        = "join-worker"
	StepCNI               = "cni"
	StepApproveCSRs       = "approve-csrs"
	StepNodeMetadata      = "node-metadata" // labels, annotations and taints from the manifest
	StepUpgradePreflight  = "upgrade-preflight"
	StepUpgradeLeader     = "upgrade-control-plane-leader"
	StepUpgradeNode       = "upgrade-node"
	StepMachineController = "machine-controller"
	StepMachineDeployment = "machine-deployments"
	StepWaitReady         = "wait-nodes-ready"
)

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
}

// Empty reports whether there is nothing to do.
func (p *Plan) Empty() bool { return len(p.Steps) == 0 }

// DesiredHost is a host as the manifest wants it.
type DesiredHost struct {
	Name         string
	Address      string
	Role         Role
	Leader       bool
	UpgradeIndex int
	// PrereqHash is the hash of the prerequisites script the host should have run; a host that
	// ran another one (the registries or proxy changed) runs it again.
	PrereqHash string
}

// Desired is the cluster the manifest describes, reduced to what planning compares.
type Desired struct {
	// Version is the Kubernetes version without "v", e.g. 1.34.1.
	Version string
	Hosts   []DesiredHost
	// Addons maps addon names (cni, machine-controller, machine-deployments) to the hash of
	// what slipway would apply now.
	Addons map[string]string
	// PendingCSRs is true when kubelet serving certificates of the cluster's nodes await
	// approval.
	PendingCSRs bool
	// MetadataDrift lists hosts whose Node labels, annotations or taints differ from the manifest.
	MetadataDrift []string
	// KubeletUpgrades describes the MachineDeployments whose kubelet version apply raises
	// (--upgrade-machine-deployments), e.g. "pool-a 1.33.4 → 1.34.1".
	KubeletUpgrades []string
}

// Error is a plan that must not run, with the reason.
type Error struct{ Reason string }

func (e *Error) Error() string { return e.Reason }

// Build compares desired and observed state and returns the steps that converge them.
func Build(d Desired, o Observed) (*Plan, error) {
	want, err := semver.StrictNewVersion(d.Version)
	if err != nil {
		return nil, fmt.Errorf("desired version %q: %w", d.Version, err)
	}
	hosts := map[string]HostState{}
	for _, h := range o.Hosts {
		hosts[h.Name] = h
	}
	p := &Plan{}
	add := func(name, host, reason string, parallel bool) {
		p.Steps = append(p.Steps, Step{Name: name, Host: host, Reason: reason, Parallel: parallel})
	}

	upgrading := false
	if o.Cluster.Exists {
		if err := checkUpgrade(o.Cluster.Version, want); err != nil {
			return nil, err
		}
		have, _ := semver.NewVersion(o.Cluster.Version)
		upgrading = have != nil && have.LessThan(want)
	}
	// The upgrade's preflight comes before anything changes on a host, the new version's
	// prerequisites (containerd's sandbox image) included.
	if upgrading {
		add(StepUpgradePreflight, "", fmt.Sprintf("the cluster runs %s; want %s", o.Cluster.Version, d.Version), false)
	}

	// Prerequisites and binaries on every host that is not yet part of the cluster or lacks them.
	for _, dh := range d.Hosts {
		h := hosts[dh.Name]
		if !h.ContainerdActive || h.SwapActive || (dh.PrereqHash != "" && h.PrereqHash != dh.PrereqHash) {
			add(StepPrerequisites, dh.Name, prereqReason(h, dh), true)
		}
	}
	for _, dh := range d.Hosts {
		h := hosts[dh.Name]
		if !h.Joined && !versionsAre(h, d.Version) {
			add(StepInstall, dh.Name, fmt.Sprintf("kubeadm %s, kubelet %s installed; want %s", orNone(h.KubeadmVersion), orNone(h.KubeletVersion), d.Version), true)
		}
	}

	leader := leaderOf(d.Hosts)
	switch {
	case !o.Cluster.Exists && hosts[leader.Name].AdminConf:
		add(StepInitFinish, leader.Name, "the leader was initialised but the cluster is not answering or not finished; wait for it and complete the remaining kubeadm phases", false)
	case !o.Cluster.Exists:
		add(StepInit, leader.Name, "no cluster exists yet", false)
	}

	var joinCP, joinW, stale []DesiredHost
	for _, dh := range d.Hosts {
		h := hosts[dh.Name]
		if dh.Leader || h.Joined {
			if h.Joined && o.Cluster.Exists && o.Cluster.Nodes[dh.Name] == nil && !dh.Leader {
				p.Warnings = append(p.Warnings, brokenHostWarning(dh, o))
			}
			continue
		}
		if o.Cluster.Exists && (o.Cluster.Nodes[dh.Name] != nil || (dh.Role == ControlPlane && memberOf(o.Cluster.Etcd, dh) != nil)) {
			stale = append(stale, dh)
		}
		if dh.Role == ControlPlane {
			joinCP = append(joinCP, dh)
		} else {
			joinW = append(joinW, dh)
		}
	}
	if len(stale) > 0 {
		if err := checkQuorum(o.Cluster.Etcd, stale, d.Hosts); err != nil {
			return nil, err
		}
	}
	// The CNI needs only the API: applied before the joins, its pods start on each node as it
	// joins, and the nodes are Ready sooner.
	if d.Addons["cni"] != "" && o.Cluster.Addons["cni"] != d.Addons["cni"] {
		add(StepCNI, "", addonReason(o.Cluster.Addons["cni"]), false)
	}
	for _, dh := range stale {
		add(StepRepair, dh.Name, "the host was reinstalled: its old Node (and etcd member) must go before it joins again", false)
	}
	for _, dh := range joinCP {
		add(StepJoinControlPlane, dh.Name, "not part of the cluster yet", false)
	}

	for _, dh := range joinW {
		add(StepJoinWorker, dh.Name, "not part of the cluster yet", true)
	}

	if upgrading {
		add(StepUpgradeLeader, leader.Name, "the first control plane upgrades the cluster-wide components", false)
	}
	for _, dh := range upgradeOrder(d.Hosts) {
		if dh.Leader && upgrading {
			continue
		}
		h := hosts[dh.Name]
		n := o.Cluster.Nodes[dh.Name]
		if !h.Joined || n == nil {
			continue
		}
		if upgrading || strings.TrimPrefix(n.KubeletVersion, "v") != d.Version || !versionsAre(h, d.Version) {
			add(StepUpgradeNode, dh.Name, fmt.Sprintf("kubelet %s; want %s", orNone(n.KubeletVersion), d.Version), false)
		}
	}

	joining := len(joinCP)+len(joinW) > 0 || !o.Cluster.Exists
	if joining || d.PendingCSRs {
		add(StepApproveCSRs, "", "kubelet serving certificates of new nodes need approval", false)
	}
	for _, name := range d.MetadataDrift {
		add(StepNodeMetadata, name, "Node labels, annotations or taints differ from the manifest", false)
	}
	notReady := false
	for _, dh := range d.Hosts {
		// A joined host whose Node is gone is reported above; waiting for it would only time out.
		if n := o.Cluster.Nodes[dh.Name]; n != nil && !n.Ready {
			notReady = true
		}
	}
	if joining || upgrading || notReady {
		add(StepWaitReady, "", "every node must be Ready", false)
	}
	for _, addon := range []struct{ name, step string }{{"machine-controller", StepMachineController}, {"machine-deployments", StepMachineDeployment}} {
		if d.Addons[addon.name] != "" && o.Cluster.Addons[addon.name] != d.Addons[addon.name] {
			reason := addonReason(o.Cluster.Addons[addon.name])
			if addon.step == StepMachineDeployment && len(d.KubeletUpgrades) > 0 {
				reason = "kubelet upgrade: " + strings.Join(d.KubeletUpgrades, ", ")
			}
			add(addon.step, "", reason, false)
		}
	}
	return p, nil
}

func prereqReason(h HostState, dh DesiredHost) string {
	var r []string
	if dh.PrereqHash != "" && h.PrereqHash != dh.PrereqHash {
		if h.PrereqHash == "" {
			r = append(r, "not prepared by slipway yet")
		} else {
			r = append(r, "containerd, registry or proxy settings changed")
		}
	}
	if !h.ContainerdActive {
		r = append(r, "containerd is not running")
	}
	if h.SwapActive {
		r = append(r, "swap is on")
	}
	return strings.Join(r, ", ")
}

func addonReason(applied string) string {
	if applied == "" {
		return "not installed yet"
	}
	return "the manifests changed since they were applied"
}

func versionsAre(h HostState, v string) bool {
	trim := func(s string) string { return strings.TrimPrefix(s, "v") }
	return trim(h.KubeadmVersion) == v && trim(h.KubeletVersion) == v
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func leaderOf(hosts []DesiredHost) DesiredHost {
	for _, h := range hosts {
		if h.Leader {
			return h
		}
	}
	return DesiredHost{}
}

// upgradeOrder is control planes by upgradeIndex (ties keep manifest order), then workers.
func upgradeOrder(hosts []DesiredHost) []DesiredHost {
	out := append([]DesiredHost(nil), hosts...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Role != out[j].Role {
			return out[i].Role == ControlPlane
		}
		return out[i].UpgradeIndex < out[j].UpgradeIndex
	})
	return out
}

// checkUpgrade allows one minor step up at a time and no downgrade.
func checkUpgrade(current string, want *semver.Version) error {
	have, err := semver.NewVersion(current)
	if err != nil {
		return &Error{Reason: fmt.Sprintf("cannot read the cluster's version %q: %v", current, err)}
	}
	switch {
	case want.LessThan(have):
		return &Error{Reason: fmt.Sprintf("the cluster runs %s and the manifest asks for %s: downgrades are not supported", have, want)}
	case want.Minor() > have.Minor()+1 || want.Major() != have.Major():
		return &Error{Reason: fmt.Sprintf("the cluster runs %s and the manifest asks for %s: upgrade one minor version at a time (next: v%d.%d)", have, want, have.Major(), have.Minor()+1)}
	}
	return nil
}

func memberOf(members []EtcdMember, h DesiredHost) *EtcdMember {
	for i, m := range members {
		if m.Name == h.Name || strings.Contains(m.PeerURL, "//"+h.Address+":") {
			return &members[i]
		}
	}
	return nil
}

// checkQuorum refuses to remove stale etcd members if the healthy members that remain would
// not be a majority of the members after the rejoin.
func checkQuorum(members []EtcdMember, stale []DesiredHost, hosts []DesiredHost) error {
	if len(members) == 0 {
		return nil
	}
	staleMembers := 0
	for _, h := range stale {
		if memberOf(members, h) != nil {
			staleMembers++
		}
	}
	healthy := 0
	for _, m := range members {
		if m.Healthy {
			healthy++
		}
	}
	// Each rejoin first removes a member and then adds one: the cluster needs a healthy majority
	// of (members - 1) + 1 throughout.
	if staleMembers > 0 && healthy <= len(members)/2 {
		return &Error{Reason: fmt.Sprintf("etcd has %d healthy of %d members, not a majority: repairing now could lose the cluster; restore quorum first (see the README's repair section)", healthy, len(members))}
	}
	return nil
}

func brokenHostWarning(dh DesiredHost, o Observed) string {
	msg := fmt.Sprintf("%s has joined before but its Node is missing from the cluster", dh.Name)
	if dh.Role == ControlPlane {
		msg += fmt.Sprintf("; replace it one host at a time: run `slipway reset` on it only after the other %d control planes are healthy, then apply again", len(o.Cluster.Etcd)-1)
	}
	return msg
}
