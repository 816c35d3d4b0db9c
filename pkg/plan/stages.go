package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/slipway-dev/slipway/pkg/kubeversion"
)

// upgradePreflight comes first when the cluster runs an older version: it checks that the
// upgrade can go ahead before any host changes, the new version's prerequisites included.
func (b *builder) upgradePreflight() {
	if b.upgrading {
		b.add(StepUpgradePreflight, "", fmt.Sprintf("the cluster runs %s; want %s", b.o.Cluster.Version, b.d.Version), false)
	}
}

// prerequisites runs on every host where containerd is not running, swap is on, or the
// prerequisites script it ran differs from the one the manifest renders now. A host that
// another tool (kubeadm by hand, KubeOne) prepared and joined is adopted instead: its
// prerequisites are recorded as the ones the manifest renders, and nothing on it changes.
func (b *builder) prerequisites() {
	for _, dh := range b.d.Hosts {
		h := b.hosts[dh.Name]
		if _, moving := b.moves[dh.Name]; moving {
			continue // the containerd step drains the node and runs the prerequisites there
		}
		if b.adoptable(dh, h) {
			b.add(StepAdoptHost, dh.Name, "joined by another tool (kubeadm or KubeOne), never prepared by slipway: its containerd, "+
				"kubelet and kernel settings stay as they are, and slipway records its prerequisites as done", true)
			continue
		}
		if !h.ContainerdActive || h.SwapActive || (dh.PrereqHash != "" && h.PrereqHash != dh.PrereqHash) {
			b.add(StepPrerequisites, dh.Name, prereqReason(h, dh), true)
		}
	}
}

// adoptable reports whether the host is a working member of the cluster that slipway did not
// prepare: it has joined, its Node exists, containerd runs, swap is off, and it holds no
// prerequisites record. Running the prerequisites there would rewrite another tool's containerd
// configuration and restart containerd under running pods; adoption records them instead, and
// the next change of the manifest's registries or proxy (or a containerd upgrade) runs them.
func (b *builder) adoptable(dh DesiredHost, h HostState) bool {
	return b.o.Cluster.Exists && h.Joined && b.o.Cluster.Nodes[dh.Name] != nil && h.PrereqHash == "" && dh.PrereqHash != "" &&
		h.ContainerdActive && !h.SwapActive
}

// binaries installs kubeadm, kubelet and kubectl on hosts that have not joined yet and lack the
// version. Joined hosts change version only through an upgrade.
func (b *builder) binaries() {
	for _, dh := range b.d.Hosts {
		h := b.hosts[dh.Name]
		if !h.Joined && !versionsAre(h, b.d.Version) {
			b.add(StepInstall, dh.Name, fmt.Sprintf("kubeadm %s, kubelet %s installed; want %s", orNone(h.KubeadmVersion), orNone(h.KubeletVersion), b.d.Version), true)
		}
	}
}

// initialise creates the cluster on the leader when none answers. A leader that already holds
// an admin kubeconfig was initialised by a run that did not finish: that init is completed
// rather than done again.
func (b *builder) initialise() {
	switch {
	case b.o.Cluster.Exists:
	case b.hosts[b.leader.Name].AdminConf:
		b.add(StepInitFinish, b.leader.Name, "the leader was initialised but the cluster is not answering or not finished; wait for it and complete the remaining kubeadm phases", false)
	case b.d.Restore:
		what := "the CAs and keys"
		if b.d.Encryption {
			// kubeadm init keeps the restored configuration, so no encryption step follows.
			what = "the CAs, keys and encryption configuration"
		}
		b.add(StepRestoreEtcd, b.leader.Name, "--restore-from: "+what+" from the PKI backup, etcd's data from the snapshot", false)
		b.add(StepInit, b.leader.Name, "--restore-from: the control plane starts on the restored etcd", false)
		reason := "--restore-from: the snapshot holds the lost control planes' kubelet serving certificate requests"
		if others := b.otherControlPlanes(); len(others) > 0 {
			reason += ", and the Nodes of " + strings.Join(others, ", ") + ", whose hosts join anew"
		}
		b.add(StepRestoreFinish, "", reason, false)
	default:
		b.add(StepInit, b.leader.Name, "no cluster exists yet", false)
	}
}

// otherControlPlanes names the desired control planes other than the leader.
func (b *builder) otherControlPlanes() []string {
	var out []string
	for _, dh := range b.d.Hosts {
		if dh.Role == ControlPlane && !dh.Leader {
			out = append(out, dh.Name)
		}
	}
	return out
}

// joins brings every host that has not joined into the cluster. A host that was reinstalled
// while the cluster kept its Node (and, for a control plane, its etcd member) has those removed
// first, which etcd's quorum must allow. The CNI needs only the API: applied before the joins,
// its pods start on each node as it joins, and the nodes are Ready sooner. A host that has
// joined but whose Node is gone is not touched: the plan warns about it instead.
func (b *builder) joins() error {
	var joinCP, joinW, stale []DesiredHost
	for _, dh := range b.d.Hosts {
		h := b.hosts[dh.Name]
		if dh.Leader || h.Joined {
			if h.Joined && b.o.Cluster.Exists && b.o.Cluster.Nodes[dh.Name] == nil && !dh.Leader {
				b.plan.Warnings = append(b.plan.Warnings, brokenHostWarning(dh, b.o))
			}
			continue
		}
		if b.o.Cluster.Exists && (b.o.Cluster.Nodes[dh.Name] != nil || (dh.Role == ControlPlane && memberOf(b.o.Cluster.Etcd, dh) != nil)) {
			stale = append(stale, dh)
		}
		if dh.Role == ControlPlane {
			joinCP = append(joinCP, dh)
		} else {
			joinW = append(joinW, dh)
		}
	}
	if len(stale) > 0 {
		if err := checkQuorum(b.o.Cluster.Etcd, stale); err != nil {
			return err
		}
	}
	if err := b.cni(); err != nil {
		return err
	}
	for _, dh := range stale {
		b.add(StepRepair, dh.Name, "the host was reinstalled: its old Node (and etcd member) must go before it joins again", false)
	}
	for _, dh := range joinCP {
		b.add(StepJoinControlPlane, dh.Name, "not part of the cluster yet", false)
	}
	for _, dh := range joinW {
		b.add(StepJoinWorker, dh.Name, "not part of the cluster yet", true)
	}
	b.joining = len(joinCP)+len(joinW) > 0 || !b.o.Cluster.Exists
	return nil
}

// cni applies the CNI's manifests when they differ from the ones recorded. A running cluster
// with no record whose pods of the manifest's CNI already run was set up by another tool: the
// CNI is adopted (recorded as applied, left running as it is) rather than applied over, which
// would restart its pods on every node. One that runs another CNI is refused: slipway does not
// switch a running cluster's pod network.
func (b *builder) cni() error {
	want, have := b.d.Addons["cni"], b.o.Cluster.Addons["cni"]
	if want == "" || have == want {
		return nil
	}
	if have == "" && b.o.Cluster.Exists && len(b.o.Cluster.CNIs) > 0 {
		if !slices.Contains(b.o.Cluster.CNIs, b.d.CNI) {
			return &Error{Reason: fmt.Sprintf("the cluster's pods run on %s, and the manifest asks for %s: slipway does not switch a running cluster's CNI; "+
				"set clusterNetwork.cni to %s (or to external, to leave the pod network alone)", strings.Join(b.o.Cluster.CNIs, ", "), orNone(b.d.CNI), b.o.Cluster.CNIs[0])}
		}
		b.add(StepAdoptCNI, "", fmt.Sprintf("%s already runs, installed by another tool: slipway records it as applied and leaves its pods as they are; "+
			"it applies its own manifests when they next change", b.d.CNI), false)
		return nil
	}
	b.add(StepCNI, "", addonReason(have), false)
	return nil
}

// containerdMoves replaces containerd, one node at a time in upgrade order, on every joined node
// whose containerd is older than the desired version's minimum (containerd 1.x before v1.36):
// the node is drained, its pods stopped, containerd 2 installed and configured, the kubelet
// restarted, and the node uncordoned when it is Ready on the new runtime. It comes before the
// upgrade, which needs the new runtime.
func (b *builder) containerdMoves() {
	for _, dh := range upgradeOrder(b.d.Hosts) {
		if reason, ok := b.moves[dh.Name]; ok {
			b.add(StepContainerd, dh.Name, reason, false)
		}
	}
}

// containerdTooOld says why a joined node's containerd must be replaced before the desired
// version runs there ("" when it need not be): Kubernetes v1.36 and later need containerd 2.
func containerdTooOld(have string, want kubeversion.Containerd) string {
	if have == "" {
		return fmt.Sprintf("containerd is not installed; want %s", want.Version)
	}
	v, err := kubeversion.ParseContainerdVersion(have)
	if err != nil {
		return fmt.Sprintf("containerd version %q cannot be read; want %s", have, want.Version)
	}
	min, _ := kubeversion.ParseContainerdVersion(want.Minimum)
	if v.LessThan(min) {
		return fmt.Sprintf("containerd %s is older than %s, the oldest this Kubernetes version runs on: drain, install containerd %s, uncordon", have, want.Minimum, want.Version)
	}
	return ""
}

// upgrades raises the version node by node: the leader upgrades the cluster-wide components,
// then control planes by upgradeIndex and workers. Outside an upgrade, a joined node whose
// kubelet or binaries are not at the version (an interrupted upgrade) is upgraded too.
func (b *builder) upgrades() {
	if b.upgrading {
		b.add(StepUpgradeLeader, b.leader.Name, "the first control plane upgrades the cluster-wide components", false)
	}
	for _, dh := range upgradeOrder(b.d.Hosts) {
		if dh.Leader && b.upgrading {
			continue
		}
		h := b.hosts[dh.Name]
		n := b.o.Cluster.Nodes[dh.Name]
		if !h.Joined || n == nil {
			continue
		}
		if b.upgrading || strings.TrimPrefix(n.KubeletVersion, "v") != b.d.Version || !versionsAre(h, b.d.Version) {
			b.add(StepUpgradeNode, dh.Name, fmt.Sprintf("kubelet %s; want %s", orNone(n.KubeletVersion), b.d.Version), false)
		}
	}
}

// nodes finishes the nodes: kubelet serving certificates approved when nodes joined or
// requests wait, Node labels, annotations and taints where they differ from the manifest, and
// a wait for every node to be Ready after joins, upgrades, or when one is not.
func (b *builder) nodes() {
	switch {
	case b.joining || b.o.Cluster.PendingCSRs:
		b.add(StepApproveCSRs, "", "kubelet serving certificates of new nodes need approval", false)
	case b.upgrading && b.o.Cluster.KubeletServingUnsigned:
		b.add(StepApproveCSRs, "", "the upgrade has the kubelets ask the cluster to sign their serving certificates (serverTLSBootstrap), "+
			"which the tool that installed the cluster did not: their requests need approval", false)
	}
	for _, name := range b.o.Cluster.MetadataDrift {
		b.add(StepNodeMetadata, name, "Node labels, annotations or taints differ from the manifest", false)
	}
	notReady := false
	for _, dh := range b.d.Hosts {
		// A joined host whose Node is gone is reported above; waiting for it would only time out.
		if n := b.o.Cluster.Nodes[dh.Name]; n != nil && !n.Ready {
			notReady = true
		}
	}
	if b.joining || b.upgrading || notReady {
		b.add(StepWaitReady, "", "every node must be Ready", false)
	}
}

// addons applies the OpenStack cloud-controller-manager, the machine-controller and the
// MachineDeployments when what the manifest renders differs from what was applied last. The
// cloud-controller-manager comes after the image archive's import (it may come from there) and
// before the machine-controller, whose machines' Nodes it initializes.
func (b *builder) addons() {
	b.addon("cloud-controller-manager", StepCloudController)
	b.addon("machine-controller", StepMachineController)
	b.addon("machine-deployments", StepMachineDeployment)
}

// addon adds step when the addon's rendered hash differs from the recorded one.
func (b *builder) addon(name, step string) {
	want, have := b.d.Addons[name], b.o.Cluster.Addons[name]
	if want == "" || have == want {
		return
	}
	reason := addonReason(have)
	if step == StepMachineDeployment && len(b.d.KubeletUpgrades) > 0 {
		reason = "kubelet upgrade: " + strings.Join(b.d.KubeletUpgrades, ", ")
	}
	b.add(step, "", reason, false)
}

// snapshots installs, changes or removes the timer of scheduled etcd snapshots on every control
// plane whose set-up differs from the manifest's (etcd.snapshots), all at once.
func (b *builder) snapshots() {
	for _, dh := range b.d.Hosts {
		if dh.Role != ControlPlane {
			continue
		}
		have := b.hosts[dh.Name].SnapshotsHash
		switch {
		case have == dh.SnapshotsHash:
		case dh.SnapshotsHash == "":
			b.add(StepEtcdSnapshots, dh.Name, "etcd.snapshots is not set: stop the scheduled snapshots (those taken stay)", true)
		case have == "":
			b.add(StepEtcdSnapshots, dh.Name, "etcd.snapshots: schedule snapshots", true)
		default:
			b.add(StepEtcdSnapshots, dh.Name, "etcd.snapshots, its S3 access key or the etcd image changed", true)
		}
	}
}
