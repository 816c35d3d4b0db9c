package sandboxapi

import (
	"fmt"
	"net/netip"
)

// Role is what a sandbox host is for.
type Role string

const (
	ControlPlane Role = "control-plane"
	Worker       Role = "worker"
	LoadBalancer Role = "lb"
)

// Host is one sandbox machine.
type Host struct {
	// Name is the hostname: cp-1, worker-1, lb, or what AddHost was given.
	Name string `json:"name"`
	Role Role   `json:"role"`
	// IP is fixed for the host's name, so that a recreated host keeps its address.
	IP string `json:"ip"`
	// Container is the Docker container's name.
	Container string `json:"container"`
	// HostKey is the host's SSH public key in authorized_keys form ("ssh-ed25519 AAAA…"); empty
	// for the load balancer, which runs no sshd.
	HostKey string `json:"hostKey,omitempty"`
}

// Fixed addresses in the sandbox's /24: .1 is Docker's gateway on the host.
const (
	assetsOctet    = 2   // registry :5000 and file server :8080
	lbOctet        = 10  // haproxy :6443
	cpFirstOctet   = 11  // cp-1 … cp-9
	workFirstOctet = 21  // worker-1 … worker-79
	extraFirst     = 100 // hosts added later with AddHost
	extraLast      = 250
)

// plan returns the hosts of a sandbox with n hosts, the first cps of them control planes.
func plan(name string, subnet netip.Prefix, n, cps int, lb bool) ([]Host, error) {
	if n < 1 || cps < 1 || cps > n || cps > 9 || n-cps > 79 {
		return nil, fmt.Errorf("want 1-9 control planes among 1-88 hosts, got %d of %d", cps, n)
	}
	var hosts []Host
	for i := 1; i <= cps; i++ {
		hosts = append(hosts, newHost(name, subnet, fmt.Sprintf("cp-%d", i), ControlPlane, cpFirstOctet+i-1))
	}
	for i := 1; i <= n-cps; i++ {
		hosts = append(hosts, newHost(name, subnet, fmt.Sprintf("worker-%d", i), Worker, workFirstOctet+i-1))
	}
	if lb {
		hosts = append(hosts, newHost(name, subnet, "lb", LoadBalancer, lbOctet))
	}
	return hosts, nil
}

func newHost(sandbox string, subnet netip.Prefix, name string, role Role, octet int) Host {
	return Host{Name: name, Role: role, IP: addr(subnet, octet), Container: containerName(sandbox, name)}
}

func containerName(sandbox, host string) string { return "slipway-" + sandbox + "-" + host }

// addr returns the address with the given last octet in a /24.
func addr(subnet netip.Prefix, octet int) string {
	a := subnet.Masked().Addr().As4()
	a[3] = byte(octet)
	return netip.AddrFrom4(a).String()
}

// parseSubnet accepts an IPv4 /24, which keeps the fixed-octet plan above simple.
func parseSubnet(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil || !p.Addr().Is4() || p.Bits() != 24 {
		return netip.Prefix{}, fmt.Errorf("subnet %q: want an IPv4 /24 such as 172.30.0.0/24", s)
	}
	return p.Masked(), nil
}
