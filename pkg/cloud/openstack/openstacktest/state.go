package openstacktest

import (
	"crypto/md5"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"net/netip"
	"sort"
	"time"

	"github.com/google/uuid"
)

// The identity every Sim starts with. Tests authenticate with these.
const (
	DomainName    = "Default"
	DomainID      = "default"
	ProjectName   = "demo"
	ProjectID     = "7d2f1c9a0b5e4e7f9a3c2b1d0e8f6a4b"
	UserID        = "4c1f0e2d9b8a47c6a5e3d2c1b0a9f8e7"
	Username      = "slipway"
	Password      = "secret"
	AppCredID     = "0f4e3d2c1b0a49f8e7d6c5b4a3928170"
	AppCredSecret = "app-secret"
	// AvailabilityZone is the only zone.
	AvailabilityZone = "nova"
)

// state is everything the cloud holds. It is guarded by Sim.mu.
type state struct {
	baseURL        string
	seq            uint64
	servers        map[string]*Server
	ports          map[string]*Port
	fips           map[string]*FloatingIP
	volumes        map[string]*Volume
	networks       map[string]*Network
	subnets        map[string]*Subnet
	secgroups      map[string]*SecurityGroup
	images         map[string]*Image
	flavors        map[string]*Flavor
	servergroups   map[string]*ServerGroup
	keypairs       map[string]*Keypair // by name
	routers        map[string]*Router
	sgRules        map[string]*SecurityGroupRule
	volumetypes    map[string]*VolumeType
	tokens         map[string]time.Time
	usedIPs        map[string]bool // "subnetID/ip"
	quota          Quota
	peakServers    int
	serverFailures []string // faults for the next servers that finish building
	leakVolumes    bool
	stuckDeletes   map[string]bool // server IDs whose deletion hangs
	down           bool            // every API connection is dropped
	octavia        *octaviaState
}

func newState() *state {
	return &state{
		servers:      map[string]*Server{},
		ports:        map[string]*Port{},
		fips:         map[string]*FloatingIP{},
		volumes:      map[string]*Volume{},
		networks:     map[string]*Network{},
		subnets:      map[string]*Subnet{},
		secgroups:    map[string]*SecurityGroup{},
		images:       map[string]*Image{},
		flavors:      map[string]*Flavor{},
		servergroups: map[string]*ServerGroup{},
		keypairs:     map[string]*Keypair{},
		routers:      map[string]*Router{},
		sgRules:      map[string]*SecurityGroupRule{},
		volumetypes:  map[string]*VolumeType{},
		tokens:       map[string]time.Time{},
		usedIPs:      map[string]bool{},
		stuckDeletes: map[string]bool{},
		octavia:      newOctaviaState(),
	}
}

func (st *state) next() uint64 { st.seq++; return st.seq }

func newID() string { return uuid.NewString() }

// seed creates the flavors, images, networks and groups of a small devstack.
func (st *state) seed() {
	for i, f := range []Flavor{
		{ID: "1", Name: "m1.tiny", VCPUs: 1, RAM: 512, Disk: 1},
		{ID: "2", Name: "m1.small", VCPUs: 1, RAM: 2048, Disk: 20},
		{ID: "3", Name: "m1.medium", VCPUs: 2, RAM: 4096, Disk: 40},
		{ID: "4", Name: "m1.large", VCPUs: 4, RAM: 8192, Disk: 80},
	} {
		f.seq = uint64(i + 1)
		st.flavors[f.ID] = &f
	}
	st.seq = 10
	st.addImage("ubuntu-24.04", 10)
	st.addImage("flatcar-stable", 8)
	st.addImage("cirros", 1)
	// What a host-backed simulator boots, whatever the image: the sandbox's Debian 12 node image.
	st.addImage("debian-12", 2)
	st.addNetwork("private", "10.0.0.0/16", false)
	st.addNetwork("public", "172.24.0.0/16", true)
	st.addSecurityGroup("default")
	st.addRouter("router1", "public", "private-subnet")
	st.addServerGroup("workers", "anti-affinity")
	st.addVolumeType("__DEFAULT__")
	st.addVolumeType("ssd")
}

func (st *state) addImage(name string, minDisk int) string {
	sum := md5.Sum([]byte(name))
	sha := sha512.Sum512([]byte(name))
	created := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	im := &Image{ID: newID(), Name: name, MinDisk: minDisk, Size: 512 << 20, Status: "active",
		Visibility: "public", DiskFormat: "qcow2", ContainerFormat: "bare", Properties: map[string]string{},
		Checksum: hex.EncodeToString(sum[:]), HashValue: hex.EncodeToString(sha[:]),
		Created: created, Updated: created, seq: st.next()}
	st.images[im.ID] = im
	return im.ID
}

func (st *state) addFlavor(id, name string, vcpus, ram, disk int) string {
	if id == "" {
		id = newID()
	}
	st.flavors[id] = &Flavor{ID: id, Name: name, VCPUs: vcpus, RAM: ram, Disk: disk, seq: st.next()}
	return id
}

func (st *state) addNetwork(name, cidr string, external bool) (string, string) {
	n := &Network{ID: newID(), Name: name, External: external, AdminStateUp: true, MTU: neutronMaxMTU,
		PortSecurity: true, AZHints: []string{}, neutronStd: newStd(""), seq: st.next()}
	st.networks[n.ID] = n
	sub := st.addSubnet(n.ID, name+"-subnet", cidr)
	return n.ID, sub
}

func (st *state) addSubnet(networkID, name, cidr string) string {
	p := netip.MustParsePrefix(cidr).Masked()
	gw := p.Addr().Next().String()
	sn := &Subnet{ID: newID(), Name: name, NetworkID: networkID, CIDR: p.String(), GatewayIP: gw,
		EnableDHCP: true, DNSNameservers: []string{}, AllocationPools: defaultPools(p, gw),
		HostRoutes: []HostRoute{}, neutronStd: newStd(""), seq: st.next()}
	st.subnets[sn.ID] = sn
	n := st.networks[networkID]
	n.SubnetIDs = append(n.SubnetIDs, sn.ID)
	return sn.ID
}

// addSecurityGroup adds a group with the rules Neutron gives every new group: all egress, and
// for the project's default group also all ingress from members of the group.
func (st *state) addSecurityGroup(name string) string {
	g := &SecurityGroup{ID: newID(), Name: name, Stateful: true, neutronStd: newStd(name + " security group"), seq: st.next()}
	st.secgroups[g.ID] = g
	for _, eth := range []string{"IPv4", "IPv6"} {
		st.addRule(&SecurityGroupRule{SecurityGroupID: g.ID, Direction: "egress", EtherType: eth})
		if name == "default" {
			st.addRule(&SecurityGroupRule{SecurityGroupID: g.ID, Direction: "ingress", EtherType: eth, RemoteGroupID: g.ID})
		}
	}
	return g.ID
}

func (st *state) addRule(r *SecurityGroupRule) *SecurityGroupRule {
	r.ID, r.neutronStd, r.seq = newID(), newStd(""), st.next()
	r.Tags = nil
	st.sgRules[r.ID] = r
	return r
}

func (st *state) addServerGroup(name, policy string) string {
	g := &ServerGroup{ID: newID(), Name: name, Policy: policy, seq: st.next()}
	st.servergroups[g.ID] = g
	return g.ID
}

func (st *state) addVolumeType(name string) string {
	t := &VolumeType{ID: newID(), Name: name, seq: st.next()}
	st.volumetypes[t.ID] = t
	return t.ID
}

// allocateIP takes the lowest free address of a subnet, or checks and takes want.
func (st *state) allocateIP(sn *Subnet, want string) (string, error) {
	p := netip.MustParsePrefix(sn.CIDR)
	if want != "" {
		a, err := netip.ParseAddr(want)
		if err != nil || !p.Contains(a) {
			return "", fmt.Errorf("IP address %s is not a valid IP for the specified subnet", want)
		}
		if st.usedIPs[sn.ID+"/"+want] || want == sn.GatewayIP {
			return "", errIPInUse
		}
		st.usedIPs[sn.ID+"/"+want] = true
		return want, nil
	}
	for _, pool := range sn.AllocationPools {
		start, end := netip.MustParseAddr(pool.Start), netip.MustParseAddr(pool.End)
		for a := start; !end.Less(a); a = a.Next() {
			key := sn.ID + "/" + a.String()
			if !st.usedIPs[key] {
				st.usedIPs[key] = true
				return a.String(), nil
			}
		}
	}
	return "", errSubnetFull
}

func (st *state) releaseIP(subnetID, ip string) { delete(st.usedIPs, subnetID+"/"+ip) }

var (
	errIPInUse    = fmt.Errorf("IP address already allocated")
	errSubnetFull = fmt.Errorf("no more IP addresses available")
)

// sortedBySeq returns the values of m in creation order.
func sortedBySeq[T any](m map[string]*T, seq func(*T) uint64) []*T {
	out := make([]*T, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return seq(out[i]) < seq(out[j]) })
	return out
}
