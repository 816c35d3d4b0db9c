package openstacktest

import (
	"context"
	"net/netip"
	"time"
)

// Hypervisor runs the machines behind servers and realizes the cloud's networking, the part of a
// cloud that Nova's compute driver and Neutron's agents play. Without one (the default) servers
// exist only as records, which is all unit tests need; test/openstack-sim/hosts boots each server
// as a sandbox host. The Sim calls it outside its lock, never twice at once for one server, and
// never for a server after Destroy returned.
type Hypervisor interface {
	// Spawn starts the machine of a server whose build is finishing; the server turns ACTIVE when
	// it returns, or ERROR with the error's text as its fault.
	Spawn(ctx context.Context, m Machine) error
	// Destroy removes a server's machine and its disks. It is called before the server's record
	// goes away, and must succeed for a machine that does not exist.
	Destroy(ctx context.Context, serverID string) error
	// Power stops, starts or reboots a server's machine, keeping its disk.
	Power(ctx context.Context, serverID string, a PowerAction) error
	// Console returns the last lines of the machine's console output, everything when lines <= 0.
	Console(ctx context.Context, serverID string, lines int) (string, error)
	// SyncNetwork makes the data plane match t: the networks that exist and where each floating IP
	// leads. The Sim calls it after changes, with the whole topology each time.
	SyncNetwork(ctx context.Context, t Topology) error
}

// PowerAction is what Power does.
type PowerAction string

// The power actions of Nova's server actions API.
const (
	PowerOff   PowerAction = "stop"
	PowerOn    PowerAction = "start"
	SoftReboot PowerAction = "reboot"
	HardReboot PowerAction = "hard-reboot"
)

// Machine is everything a hypervisor needs to boot a server, copied out of the Sim.
type Machine struct {
	Server Server
	// Hostname is what Nova derives from the server's name (or its hostname at 2.90+).
	Hostname string
	// Ports are the server's network interfaces, in attachment order.
	Ports []MachinePort
	// PublicKey is the key of the server's keypair, if it has one.
	PublicKey string
	// ConfigDrive is the content of the server's config drive, by path (openstack/latest/...).
	// Every server gets one: cloud-init finds its metadata and user-data there.
	ConfigDrive map[string][]byte
}

// MachinePort is one network interface of a machine.
type MachinePort struct {
	PortID  string
	MAC     string
	IP      string
	Network NetworkInfo
}

// NetworkInfo is what the data plane needs of a Neutron network: its first IPv4 subnet.
type NetworkInfo struct {
	ID, Name string
	// CIDR and Gateway are the subnet's; Gateway is empty when the subnet has none.
	CIDR, Gateway string
	External      bool
}

// Topology is the cloud's L3 view for SyncNetwork.
type Topology struct {
	// At is when the Sim took this view: a network made for a server after it is not stale.
	At time.Time
	// Networks are every network that has a subnet.
	Networks []NetworkInfo
	// FloatingIPs are the associated floating IPs.
	FloatingIPs []FloatingMapping
	// LoadBalancers are the Octavia load balancers, each with its listeners.
	LoadBalancers []LoadBalancerInfo
}

// LoadBalancerInfo is what the data plane needs of an Octavia load balancer: where its VIP is
// and what each listener forwards where. A hypervisor runs it as a TCP proxy (the amphora).
type LoadBalancerInfo struct {
	ID, Name string
	// VIP is the address of the VIP port on Network; VIPPortID is that port.
	VIP, VIPPortID string
	Network        NetworkInfo
	// AdminUp is false for a load balancer set administratively down: it serves nothing.
	AdminUp   bool
	Listeners []ListenerInfo
}

// ListenerInfo is a listener with its default pool.
type ListenerInfo struct {
	ID string
	// Protocol is TCP, HTTP, HTTPS (passed through) or UDP; Port is the VIP's port.
	Protocol string
	Port     int
	// AllowedCIDRs limit the sources; empty allows all.
	AllowedCIDRs []string
	// Method is ROUND_ROBIN, LEAST_CONNECTIONS or SOURCE_IP.
	Method  string
	Members []MemberInfo
	// Monitor is the pool's health monitor, nil when it has none.
	Monitor *MonitorInfo
	AdminUp bool
}

// MemberInfo is one backend of a pool.
type MemberInfo struct {
	ID, Address string
	Port        int
	Weight      int
	AdminUp     bool
}

// MonitorInfo is a pool's health monitor.
type MonitorInfo struct {
	// Type is TCP, HTTP, HTTPS, PING or TLS-HELLO.
	Type                       string
	Delay, Timeout, MaxRetries int
	// HTTPMethod, URLPath and ExpectedCodes apply to HTTP and HTTPS monitors.
	HTTPMethod, URLPath, ExpectedCodes string
}

// FloatingMapping sends traffic for a floating address to a port's fixed address.
type FloatingMapping struct {
	Address, FixedIP, PortID string
}

// networkInfo describes a network by its first IPv4 subnet. Callers hold s.mu.
func (s *Sim) networkInfo(n *Network) (NetworkInfo, bool) {
	info := NetworkInfo{ID: n.ID, Name: n.Name, External: n.External}
	for _, id := range n.SubnetIDs {
		sn := s.st.subnets[id]
		if sn == nil {
			continue
		}
		if p, err := netip.ParsePrefix(sn.CIDR); err != nil || !p.Addr().Is4() {
			continue
		}
		info.CIDR, info.Gateway = sn.CIDR, sn.GatewayIP
		return info, true
	}
	return info, false
}

// machine describes a server for Spawn. Callers hold s.mu.
func (s *Sim) machine(srv *Server) Machine {
	m := Machine{Server: s.copyServer(srv), Hostname: hostnameOf(srv)}
	for _, pid := range srv.PortIDs {
		p := s.st.ports[pid]
		if p == nil || len(p.FixedIPs) == 0 {
			continue
		}
		n := s.st.networks[p.NetworkID]
		if n == nil {
			continue
		}
		info, _ := s.networkInfo(n)
		m.Ports = append(m.Ports, MachinePort{PortID: p.ID, MAC: p.MACAddress, IP: p.FixedIPs[0].IPAddress, Network: info})
	}
	m.PublicKey = s.keypairPublicKey(srv.KeyName)
	m.ConfigDrive = s.configDrive(srv, m)
	return m
}

// topology is the L3 view for SyncNetwork. Callers hold s.mu.
func (s *Sim) topology() Topology {
	t := Topology{At: time.Now()}
	for _, n := range sortedBySeq(s.st.networks, func(n *Network) uint64 { return n.seq }) {
		if info, ok := s.networkInfo(n); ok {
			t.Networks = append(t.Networks, info)
		}
	}
	for _, f := range sortedBySeq(s.st.fips, func(f *FloatingIP) uint64 { return f.seq }) {
		if f.PortID != "" && f.FixedIP != "" {
			t.FloatingIPs = append(t.FloatingIPs, FloatingMapping{Address: f.Address, FixedIP: f.FixedIP, PortID: f.PortID})
		}
	}
	t.LoadBalancers = s.loadBalancerTopology()
	return t
}

// hostnameOf is what the guest calls itself: the hostname Nova recorded at create (2.90+) or
// derived from the name.
func hostnameOf(srv *Server) string {
	if srv.Hostname != "" {
		return srv.Hostname
	}
	return sanitizeHostname(srv.Name)
}

// NetworkInfo describes a network the way the data plane sees it, false when it does not exist
// or has no IPv4 subnet.
func (s *Sim) NetworkInfo(id string) (NetworkInfo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.st.networks[id]
	if n == nil {
		return NetworkInfo{}, false
	}
	return s.networkInfo(n)
}
