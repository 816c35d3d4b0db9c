package plan

import (
	"fmt"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// The rules the stages of Build share: reasons, version comparisons, ordering and the etcd
// quorum check.

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
func checkQuorum(members []EtcdMember, stale []DesiredHost) error {
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

// checkRestore allows a restore only when every control plane is fresh: no API answers, and no
// control plane has joined, holds an admin kubeconfig or holds etcd data. A cluster with one
// control plane left is repaired, not restored: a restore would throw away what etcd wrote
// since the snapshot.
func checkRestore(d Desired, o Observed) error {
	if o.Cluster.Exists {
		return &Error{Reason: "--restore-from is for a cluster whose control planes were all lost, and this one answers: run apply without it (a reinstalled control plane is repaired, and a restore interrupted after kubeadm init is finished), or reset the control planes first if you mean to go back to the snapshot"}
	}
	hosts := map[string]HostState{}
	for _, h := range o.Hosts {
		hosts[h.Name] = h
	}
	var kept []string
	for _, dh := range d.Hosts {
		h := hosts[dh.Name]
		if dh.Role != ControlPlane {
			continue
		}
		var holds []string
		if h.Joined {
			holds = append(holds, "a kubelet.conf")
		}
		if h.AdminConf {
			holds = append(holds, "an admin.conf")
		}
		if h.EtcdData {
			holds = append(holds, "etcd data in /var/lib/etcd")
		}
		if len(holds) > 0 {
			kept = append(kept, dh.Name+" ("+strings.Join(holds, ", ")+")")
		}
	}
	if len(kept) > 0 {
		return &Error{Reason: "--restore-from needs fresh control planes, and these still hold a cluster's state: " + strings.Join(kept, "; ") +
			". If that cluster is lost, run slipway reset on them first; if it is not, repair it with apply and no --restore-from"}
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
