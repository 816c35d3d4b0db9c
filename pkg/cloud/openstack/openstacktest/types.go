package openstacktest

import "time"

// Server is a Nova server as the simulator holds it. Introspection returns copies.
type Server struct {
	ID        string
	Name      string
	ProjectID string
	// Description (microversion 2.19) is empty when unset.
	Description string
	// Hostname is what the guest is told to call itself: the sanitized name unless given
	// (microversion 2.90).
	Hostname   string
	AccessIPv4 string
	AccessIPv6 string
	// Status is BUILD, ACTIVE or ERROR.
	Status string
	// TaskState is "deleting" between a DELETE and the server's disappearance.
	TaskState string
	// Fault is the message of an ERROR server.
	Fault            string
	FlavorID         string
	ImageID          string
	Metadata         map[string]string
	Tags             []string
	UserData         []byte
	ConfigDrive      bool
	AvailabilityZone string
	ServerGroupID    string
	SecurityGroups   []string
	KeyName          string
	// PortIDs are the server's ports, in attachment order.
	PortIDs []string
	// VolumeIDs are the attached volumes; the first is the boot volume when booted from volume.
	VolumeIDs  []string
	Created    time.Time
	Updated    time.Time
	LaunchedAt time.Time
	seq        uint64
}

// FixedIP is an address of a port on a subnet.
type FixedIP struct {
	SubnetID  string
	IPAddress string
}

// Port is a Neutron port.
type Port struct {
	ID               string
	Name             string
	Description      string
	NetworkID        string
	ProjectID        string
	FixedIPs         []FixedIP
	MACAddress       string
	DeviceID         string
	DeviceOwner      string
	SecurityGroupIDs []string
	Tags             []string
	AdminStateUp     bool
	PortSecurity     bool
	// AllowedAddressPairs are returned as sent.
	AllowedAddressPairs []AddressPair
	// NovaOwned ports were created by Nova for a server's network request, and Nova deletes them
	// with the server; ports the caller created are only detached.
	NovaOwned bool
	Created   time.Time
	Updated   time.Time
	Revision  int
	seq       uint64
}

// AddressPair is an allowed address pair of a port.
type AddressPair struct {
	IPAddress  string `json:"ip_address"`
	MACAddress string `json:"mac_address,omitempty"`
}

// FloatingIP is a Neutron floating IP.
type FloatingIP struct {
	ID               string
	NetworkID        string
	ProjectID        string
	Address          string
	PortID           string
	FixedIP          string
	RouterID         string
	Description      string
	Tags             []string
	Created          time.Time
	Updated          time.Time
	Revision         int
	seq              uint64
	floatingSubnetID string
}

// Volume is a Cinder volume.
type Volume struct {
	ID               string
	Name             string
	Description      string
	Metadata         map[string]string
	ProjectID        string
	Status           string
	Size             int
	VolumeType       string
	ImageID          string
	AvailabilityZone string
	// ServerID is the server the volume is attached to, if any, as Device.
	ServerID string
	Device   string
	// DeleteOnTermination volumes go with their server.
	DeleteOnTermination bool
	Bootable            bool
	Created             time.Time
	Updated             time.Time
	seq                 uint64
}

// neutronStd are the standard attributes every Neutron resource has.
type neutronStd struct {
	Description string
	Tags        []string
	Revision    int
	Created     time.Time
	Updated     time.Time
}

// Network is a Neutron network.
type Network struct {
	ID           string
	Name         string
	External     bool
	Shared       bool
	AdminStateUp bool
	MTU          int
	PortSecurity bool
	AZHints      []string
	SubnetIDs    []string
	neutronStd
	seq uint64
}

// IPRange is an allocation pool of a subnet.
type IPRange struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// HostRoute is a static route a subnet's DHCP hands out.
type HostRoute struct {
	Destination string `json:"destination"`
	NextHop     string `json:"nexthop"`
}

// Subnet is a Neutron IPv4 subnet.
type Subnet struct {
	ID        string
	Name      string
	NetworkID string
	CIDR      string
	// GatewayIP is empty for a subnet without a gateway.
	GatewayIP       string
	EnableDHCP      bool
	DNSNameservers  []string
	AllocationPools []IPRange
	HostRoutes      []HostRoute
	neutronStd
	seq uint64
}

// SecurityGroup is a Neutron security group. Its rules are stored and returned, not enforced.
type SecurityGroup struct {
	ID       string
	Name     string
	Stateful bool
	neutronStd
	seq uint64
}

// SecurityGroupRule is a rule of a security group, as Neutron stores it.
type SecurityGroupRule struct {
	ID              string
	SecurityGroupID string
	// Direction is ingress or egress; EtherType IPv4 or IPv6.
	Direction string
	EtherType string
	// Protocol is empty for any protocol, otherwise as sent (a name or a number).
	Protocol       string
	PortRangeMin   *int
	PortRangeMax   *int
	RemoteIPPrefix string
	RemoteGroupID  string
	neutronStd
	seq uint64
}

// Router is a Neutron router.
type Router struct {
	ID           string
	Name         string
	AdminStateUp bool
	// GatewayNetworkID is the external network of the router's gateway; empty without one.
	GatewayNetworkID string
	GatewayIPs       []FixedIP
	AZHints          []string
	neutronStd
	seq uint64
}

// Image is a Glance image.
type Image struct {
	ID      string
	Name    string
	MinDisk int
	MinRAM  int
	Size    int64
	// Status is queued until data is uploaded, then active.
	Status string
	// Visibility is public, private, shared or community.
	Visibility      string
	Protected       bool
	Hidden          bool
	DiskFormat      string
	ContainerFormat string
	Tags            []string
	// Properties are the image's additional properties, returned as sent.
	Properties map[string]string
	// Checksum (MD5) and HashValue (SHA-512) are of the uploaded data.
	Checksum  string
	HashValue string
	Created   time.Time
	Updated   time.Time
	seq       uint64
}

// Flavor is a Nova flavor.
type Flavor struct {
	ID    string
	Name  string
	VCPUs int
	RAM   int
	Disk  int
	// ExtraSpecs are the flavor's extra specs ("properties" in the openstack CLI).
	ExtraSpecs map[string]string
	seq        uint64
}

// Keypair is a Nova keypair of the simulator's user.
type Keypair struct {
	Name        string
	PublicKey   string
	Fingerprint string
	// Type is ssh or x509.
	Type    string
	Created time.Time
	seq     uint64
}

// ServerGroup is a Nova server group.
type ServerGroup struct {
	ID     string
	Name   string
	Policy string
	// MaxServerPerHost is the anti-affinity rule of microversion 2.64; 0 when unset.
	MaxServerPerHost int
	Members          []string
	seq              uint64
}

// VolumeType is a Cinder volume type.
type VolumeType struct {
	ID   string
	Name string
	seq  uint64
}
