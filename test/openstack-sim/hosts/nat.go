package hosts

import (
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"slices"
	"strings"
	"sync"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
	"github.com/slipway-dev/slipway/test/sandbox/sandboxapi"
)

// nat keeps the floating IPs of one cloud as iptables rules on this machine, in two chains of its
// own: destination NAT from each floating address to its fixed address, for traffic from this
// machine (OUTPUT) and from the hosts (PREROUTING), and masquerading of that traffic, so that a
// host reaching another host's floating IP on its own network gets the answer back through here.
type nat struct {
	dnat, snat string
	mu         sync.Mutex
	applied    []openstacktest.FloatingMapping
	ready      bool
}

func newNAT(cloud string) *nat {
	base := "SLIPWAY-OS-" + strings.ToUpper(cloud)
	return &nat{dnat: base + "-DNAT", snat: base + "-SNAT"}
}

// hooks are the built-in chains that jump to ours.
func (n *nat) hooks() [][2]string {
	return [][2]string{{"PREROUTING", n.dnat}, {"OUTPUT", n.dnat}, {"POSTROUTING", n.snat}}
}

// apply replaces the rules of both chains at once with iptables-restore, when they changed.
func (n *nat) apply(ctx context.Context, fips []openstacktest.FloatingMapping) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ready && slices.Equal(n.applied, fips) {
		return nil
	}
	var rules strings.Builder
	fmt.Fprintf(&rules, "*nat\n:%s - [0:0]\n:%s - [0:0]\n", n.dnat, n.snat)
	for _, f := range fips {
		from, err1 := netip.ParseAddr(f.Address)
		to, err2 := netip.ParseAddr(f.FixedIP)
		if err1 != nil || err2 != nil || !from.Is4() || !to.Is4() {
			return fmt.Errorf("floating IP %q → %q: not two IPv4 addresses", f.Address, f.FixedIP)
		}
		fmt.Fprintf(&rules, "-A %s -d %s/32 -j DNAT --to-destination %s\n", n.dnat, from, to)
		fmt.Fprintf(&rules, "-A %s -d %s/32 -m conntrack --ctstate DNAT --ctorigdst %s/32 -j MASQUERADE\n", n.snat, to, from)
	}
	rules.WriteString("COMMIT\n")
	if _, err := sandboxapi.Run(ctx, strings.NewReader(rules.String()), "iptables-restore", "--noflush"); err != nil {
		return fmt.Errorf("floating IPs: %w", err)
	}
	for _, h := range n.hooks() {
		if _, err := sandboxapi.Run(ctx, nil, "iptables", "-t", "nat", "-C", h[0], "-j", h[1]); err == nil {
			continue
		}
		if _, err := sandboxapi.Run(ctx, nil, "iptables", "-t", "nat", "-I", h[0], "-j", h[1]); err != nil {
			return fmt.Errorf("floating IPs: %w", err)
		}
	}
	n.applied, n.ready = slices.Clone(fips), true
	return nil
}

// remove deletes the jumps and both chains; absent ones are no error.
func (n *nat) remove(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, err := exec.LookPath("iptables"); err != nil {
		return nil // nothing can have been set up here
	}
	for _, h := range n.hooks() {
		for {
			if _, err := sandboxapi.Run(ctx, nil, "iptables", "-t", "nat", "-D", h[0], "-j", h[1]); err != nil {
				break
			}
		}
	}
	for _, c := range []string{n.dnat, n.snat} {
		if _, err := sandboxapi.Run(ctx, nil, "iptables", "-t", "nat", "-L", c, "-n"); err != nil {
			continue
		}
		if _, err := sandboxapi.Run(ctx, nil, "iptables", "-t", "nat", "-F", c); err != nil {
			return err
		}
		if _, err := sandboxapi.Run(ctx, nil, "iptables", "-t", "nat", "-X", c); err != nil {
			return err
		}
	}
	n.applied, n.ready = nil, false
	return nil
}
