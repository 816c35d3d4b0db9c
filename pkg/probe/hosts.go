package probe

import (
	"context"
	"fmt"
	"strings"

	"github.com/slipway-dev/slipway/pkg/applied"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/scripts"
	"github.com/slipway-dev/slipway/pkg/ssh"
)

// host is one host's probe: the node, and what the host reported.
type host struct {
	node       *inventory.Node
	facts      scripts.Facts
	prereqHash string
	// snapshotsHash is the record of the scheduled etcd snapshots' set-up (control planes).
	snapshotsHash string
}

// Hosts probes every host, at most in.Parallel at once, and settles the node names. Every host
// that fails is reported, and none of them is changed.
func Hosts(ctx context.Context, in Input) (*Observed, error) {
	seen := make([]*host, len(in.Nodes))
	for i, n := range in.Nodes {
		seen[i] = &host{node: n}
	}
	// Each goroutine writes only the host it was given.
	err := ssh.Each(ctx, seen, in.Parallel, func(ctx context.Context, h *host) error {
		return h.probe(ctx, in.SSH.Host(h.node.Target))
	})
	if err != nil {
		return nil, fmt.Errorf("probing hosts (nothing was changed): %w", err)
	}
	o := &Observed{Facts: map[string]scripts.Facts{}}
	names := map[string]string{} // node name → address, to refuse duplicates
	for _, h := range seen {
		settled := *h.node
		if settled.Provisional {
			settled.Name, settled.Provisional = strings.ToLower(h.facts.Hostname), false
		}
		if prev, dup := names[settled.Name]; dup {
			return nil, fmt.Errorf("hosts %s and %s both have the node name %q; set distinct hostnames in the manifest", prev, settled.Target.Address, settled.Name)
		}
		names[settled.Name] = settled.Target.Address
		o.Nodes = append(o.Nodes, &settled)
		o.Facts[settled.Name] = h.facts
		o.State.Hosts = append(o.State.Hosts, h.state(&settled))
	}
	return o, nil
}

// readRecords prints what the host recorded of slipway's set-up: the prerequisites record, then
// after recordsSeparator the record of the scheduled etcd snapshots. Missing files print nothing.
const (
	recordsSeparator = "\n--- etcd snapshots\n"
	readRecords      = "cat " + applied.PrereqHashFile + " 2>/dev/null; printf '" + `\n--- etcd snapshots\n` + "'; cat " + scripts.SnapshotRecord + " 2>/dev/null; true"
)

// probe runs the probe script on the host and reads its records.
func (h *host) probe(ctx context.Context, sh ssh.Host) error {
	out, err := sh.Script(ctx, "probe", scripts.Probe()).Output()
	if err != nil {
		return err
	}
	f, err := scripts.ParseProbe(string(out))
	if err != nil {
		return fmt.Errorf("%s: %w", h.node.Name, err)
	}
	records, err := sh.Script(ctx, "read slipway records", readRecords).Output()
	if err != nil {
		return err
	}
	prereq, snapshots, _ := strings.Cut(string(records), recordsSeparator)
	if err := checkHost(h.node, &f); err != nil {
		return fmt.Errorf("%s: %w", h.node.Name, err)
	}
	h.facts, h.prereqHash, h.snapshotsHash = f, strings.TrimSpace(prereq), strings.TrimSpace(snapshots)
	return nil
}

// checkHost refuses hosts slipway cannot manage.
func checkHost(n *inventory.Node, f *scripts.Facts) error {
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

// state is the host as planning sees it, under its settled node n.
func (h *host) state(n *inventory.Node) plan.HostState {
	f := h.facts
	return plan.HostState{
		Name: n.Name, Address: n.Target.Address, Role: n.Role, Leader: n.Host.IsLeader,
		OS: f.OS.ID + " " + f.OS.VersionID, Arch: f.Arch,
		ContainerdVersion: f.ContainerdVersion, ContainerdActive: f.ContainerdActive,
		KubeletVersion: f.KubeletVersion, KubeletActive: f.KubeletActive, KubeadmVersion: f.KubeadmVersion,
		Joined: f.KubeletConf, AdminConf: f.AdminConf, EtcdData: f.EtcdData,
		CertExpiry: f.APIServerCertExpiry, SwapActive: f.SwapActive, PrereqHash: h.prereqHash,
		SnapshotsHash: h.snapshotsHash,
	}
}
