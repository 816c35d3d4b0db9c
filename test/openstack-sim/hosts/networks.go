package hosts

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
	"github.com/slipway-dev/slipway/test/sandbox/sandboxapi"
)

// networkName is the Docker network of a Neutron network: the one it is mapped to as a
// provider network, or the cloud's own.
func (b *Backend) networkName(n openstacktest.NetworkInfo) string {
	if d, ok := b.provider[n.Name]; ok {
		return d
	}
	return "slipway-os-" + b.name + "-" + n.ID[:min(12, len(n.ID))]
}

// ensureNetwork creates the Docker network behind a Neutron network on first use: an internal
// bridge (nothing beyond this machine is reachable, as on the sandbox network) on the subnet's
// CIDR, whose gateway address is this machine, the router of every simulated network.
func (b *Backend) ensureNetwork(ctx context.Context, n openstacktest.NetworkInfo) error {
	if n.CIDR == "" {
		return fmt.Errorf("network %s (%s) has no IPv4 subnet to attach a host to", n.ID, n.Name)
	}
	b.netMu.Lock()
	defer b.netMu.Unlock()
	name := b.networkName(n)
	if _, ok := b.provider[n.Name]; ok {
		return checkProviderNetwork(ctx, name, n)
	}
	out, err := sandboxapi.Docker(ctx, "network", "ls", "-q", "--filter", "name=^"+name+"$")
	if err != nil || out != "" {
		return err
	}
	gateway, err := dockerGateway(n)
	if err != nil {
		return err
	}
	_, err = sandboxapi.Docker(ctx, "network", "create", "--driver", "bridge", "--internal",
		"--subnet", n.CIDR, "--gateway", gateway,
		"--label", Label+"="+b.name, "--label", labelNetwork+"="+n.ID, name)
	if err != nil {
		return fmt.Errorf("network %s (%s, %s): %w", n.ID, n.Name, n.CIDR, err)
	}
	b.logf("network %s (%s) is Docker network %s on %s", n.ID, n.Name, name, n.CIDR)
	return nil
}

// dockerGateway is the address this machine takes on the network: the subnet's gateway, or, for
// a subnet without one, its last usable address (which Neutron hands out last).
func dockerGateway(n openstacktest.NetworkInfo) (string, error) {
	if n.Gateway != "" {
		return n.Gateway, nil
	}
	p, err := netip.ParsePrefix(n.CIDR)
	if err != nil || !p.Addr().Is4() || p.Bits() > 30 {
		return "", fmt.Errorf("network %s: subnet %q is not an IPv4 CIDR with room for hosts", n.ID, n.CIDR)
	}
	a := p.Masked().Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 2 // the broadcast address minus one
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3]) + host
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}).String(), nil
}

// SyncNetwork removes the Docker networks of Neutron networks that are gone, and makes the
// floating IPs' NAT rules match the topology. A Docker network made after the topology was taken
// stays: its Neutron network is newer than this view.
func (b *Backend) SyncNetwork(ctx context.Context, t openstacktest.Topology) error {
	if err := b.nat.apply(ctx, t.FloatingIPs); err != nil {
		return err
	}
	if err := b.syncLoadBalancers(ctx, t.LoadBalancers); err != nil {
		return err
	}
	live := map[string]bool{}
	for _, n := range t.Networks {
		live[n.ID] = true
	}
	b.netMu.Lock()
	defer b.netMu.Unlock()
	out, err := sandboxapi.Docker(ctx, "network", "ls", "--filter", "label="+Label+"="+b.name,
		"--format", `{{.Label "`+labelNetwork+`"}} {{.Name}} {{.CreatedAt}}`)
	if err != nil {
		return err
	}
	for _, line := range sandboxapi.Lines(out) {
		f := strings.Fields(line)
		if len(f) < 5 {
			return fmt.Errorf("unexpected line from docker network ls: %q", line)
		}
		id, name := f[0], f[1]
		created, err := time.Parse("2006-01-02 15:04:05.999999999 -0700", f[2]+" "+f[3]+" "+f[4])
		if err != nil {
			return fmt.Errorf("docker network ls: creation time of %s: %w", name, err)
		}
		if live[id] || created.After(t.At) {
			continue
		}
		if _, err := sandboxapi.Docker(ctx, "network", "rm", name); err != nil {
			return fmt.Errorf("removing the network of deleted network %s: %w", id, err)
		}
		b.logf("network %s deleted: Docker network %s removed", id, name)
	}
	return nil
}

// checkProviderNetwork makes sure that the Docker network a provider network maps to exists and
// has the subnet's CIDR, so that Neutron's addresses are the hosts' addresses.
func checkProviderNetwork(ctx context.Context, docker string, n openstacktest.NetworkInfo) error {
	got, err := sandboxapi.Docker(ctx, "network", "inspect", "--format", "{{range .IPAM.Config}}{{.Subnet}} {{end}}", docker)
	if err != nil {
		return fmt.Errorf("provider network %s (%s) maps to Docker network %s: %w", n.Name, n.ID, docker, err)
	}
	want, err := netip.ParsePrefix(n.CIDR)
	if err != nil {
		return fmt.Errorf("provider network %s: subnet %q: %w", n.Name, n.CIDR, err)
	}
	for _, f := range strings.Fields(got) {
		if p, err := netip.ParsePrefix(f); err == nil && p.Masked() == want.Masked() {
			return nil
		}
	}
	return fmt.Errorf("provider network %s has subnet %s, but Docker network %s has %q", n.Name, n.CIDR, docker, got)
}

// HostAddress gives this machine its address on a network (the subnet's gateway), making the
// network's Docker network if needed, and returns it: a service listening there, the cloud's
// API for instance, is reachable from this machine and from every host on every network.
func (b *Backend) HostAddress(ctx context.Context, n openstacktest.NetworkInfo) (string, error) {
	if err := b.ensureNetwork(ctx, n); err != nil {
		return "", err
	}
	return dockerGateway(n)
}
