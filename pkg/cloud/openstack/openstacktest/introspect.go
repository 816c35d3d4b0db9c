package openstacktest

import (
	"maps"
	"slices"
)

// snapshot copies every value of m, in creation order.
func snapshot[T any](s *Sim, m map[string]*T, seq func(*T) uint64, copyFn func(*T) T) []T {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []T
	for _, v := range sortedBySeq(m, seq) {
		out = append(out, copyFn(v))
	}
	return out
}

func plain[T any](v *T) T { return *v }

// Servers returns every server, including those being deleted.
func (s *Sim) Servers() []Server {
	return snapshot(s, s.st.servers, func(v *Server) uint64 { return v.seq }, func(v *Server) Server { return s.copyServer(v) })
}

// Ports returns every port of servers and callers. The interface ports of routers (device
// owner network:router_interface), the cloud's plumbing, are listed by the API but left out
// here, so that a test can check that nothing it made leaked; RouterPorts returns them.
func (s *Sim) Ports() []Port {
	return slices.DeleteFunc(s.allPorts(), func(p Port) bool { return p.DeviceOwner == ownerRouterInterface })
}

// RouterPorts returns the interface ports of routers.
func (s *Sim) RouterPorts() []Port {
	return slices.DeleteFunc(s.allPorts(), func(p Port) bool { return p.DeviceOwner != ownerRouterInterface })
}

func (s *Sim) allPorts() []Port {
	return snapshot(s, s.st.ports, func(v *Port) uint64 { return v.seq }, func(p *Port) Port {
		c := *p
		c.FixedIPs, c.SecurityGroupIDs, c.Tags = slices.Clone(p.FixedIPs), slices.Clone(p.SecurityGroupIDs), slices.Clone(p.Tags)
		c.AllowedAddressPairs = slices.Clone(p.AllowedAddressPairs)
		return c
	})
}

// Routers returns every router.
func (s *Sim) Routers() []Router {
	return snapshot(s, s.st.routers, func(v *Router) uint64 { return v.seq }, func(r *Router) Router {
		c := *r
		c.GatewayIPs, c.AZHints, c.Tags = slices.Clone(r.GatewayIPs), slices.Clone(r.AZHints), slices.Clone(r.Tags)
		return c
	})
}

// SecurityGroupRules returns every rule of every security group.
func (s *Sim) SecurityGroupRules() []SecurityGroupRule {
	return snapshot(s, s.st.sgRules, func(v *SecurityGroupRule) uint64 { return v.seq }, plain[SecurityGroupRule])
}

// Keypairs returns every keypair.
func (s *Sim) Keypairs() []Keypair {
	return snapshot(s, s.st.keypairs, func(v *Keypair) uint64 { return v.seq }, plain[Keypair])
}

// FloatingIPs returns every floating IP.
func (s *Sim) FloatingIPs() []FloatingIP {
	return snapshot(s, s.st.fips, func(v *FloatingIP) uint64 { return v.seq }, func(f *FloatingIP) FloatingIP {
		c := *f
		c.Tags = slices.Clone(f.Tags)
		return c
	})
}

// Volumes returns every volume.
func (s *Sim) Volumes() []Volume {
	return snapshot(s, s.st.volumes, func(v *Volume) uint64 { return v.seq }, func(v *Volume) Volume {
		c := *v
		c.Metadata = maps.Clone(v.Metadata)
		return c
	})
}

// Networks returns every network.
func (s *Sim) Networks() []Network {
	return snapshot(s, s.st.networks, func(v *Network) uint64 { return v.seq }, func(n *Network) Network {
		c := *n
		c.SubnetIDs = slices.Clone(n.SubnetIDs)
		return c
	})
}

// Subnets returns every subnet.
func (s *Sim) Subnets() []Subnet {
	return snapshot(s, s.st.subnets, func(v *Subnet) uint64 { return v.seq }, plain[Subnet])
}

// Images returns every image.
func (s *Sim) Images() []Image {
	return snapshot(s, s.st.images, func(v *Image) uint64 { return v.seq }, func(im *Image) Image {
		c := *im
		c.Tags, c.Properties = slices.Clone(im.Tags), maps.Clone(im.Properties)
		return c
	})
}

// Flavors returns every flavor.
func (s *Sim) Flavors() []Flavor {
	return snapshot(s, s.st.flavors, func(v *Flavor) uint64 { return v.seq }, func(f *Flavor) Flavor {
		c := *f
		c.ExtraSpecs = maps.Clone(f.ExtraSpecs)
		return c
	})
}

// SecurityGroups returns every security group.
func (s *Sim) SecurityGroups() []SecurityGroup {
	return snapshot(s, s.st.secgroups, func(v *SecurityGroup) uint64 { return v.seq }, plain[SecurityGroup])
}

// ServerGroups returns every server group.
func (s *Sim) ServerGroups() []ServerGroup {
	return snapshot(s, s.st.servergroups, func(v *ServerGroup) uint64 { return v.seq }, func(g *ServerGroup) ServerGroup {
		c := *g
		c.Members = slices.Clone(g.Members)
		return c
	})
}

// Server returns one server by ID.
func (s *Sim) Server(id string) (Server, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	srv, ok := s.st.servers[id]
	if !ok {
		return Server{}, false
	}
	return s.copyServer(srv), true
}

// SetServerMetadata replaces a server's metadata behind the API, e.g. to stage an orphan.
func (s *Sim) SetServerMetadata(id string, md map[string]string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	srv, ok := s.st.servers[id]
	if ok {
		srv.Metadata = maps.Clone(md)
	}
	return ok
}

// AddImage adds a Glance image and returns its ID.
func (s *Sim) AddImage(name string, minDiskGB int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.addImage(name, minDiskGB)
}

// AddFlavor adds a flavor and returns its ID (a UUID when id is empty).
func (s *Sim) AddFlavor(id, name string, vcpus, ramMiB, diskGB int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.addFlavor(id, name, vcpus, ramMiB, diskGB)
}

// AddNetwork adds a network with one subnet named "<name>-subnet" and returns both IDs. An
// internal network's subnet gets an interface on the seeded router1, so its ports can have
// floating IPs, as on a cloud whose operator wired it up.
func (s *Sim) AddNetwork(name, cidr string, external bool) (networkID, subnetID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	networkID, subnetID = s.st.addNetwork(name, cidr, external)
	if !external {
		s.st.routeSubnet(subnetID)
	}
	return networkID, subnetID
}

// AddSubnet adds a subnet to a network, routed by router1 as AddNetwork does, and returns its ID.
func (s *Sim) AddSubnet(networkID, name, cidr string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.st.addSubnet(networkID, name, cidr)
	if !s.st.networks[networkID].External {
		s.st.routeSubnet(id)
	}
	return id
}

// AddSecurityGroup adds a security group and returns its ID.
func (s *Sim) AddSecurityGroup(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.addSecurityGroup(name)
}

// AddServerGroup adds a server group with a policy such as anti-affinity and returns its ID.
func (s *Sim) AddServerGroup(name, policy string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.addServerGroup(name, policy)
}
