package openstacktest

import "time"

// Server is a Nova server as the simulator holds it. Introspection returns copies.
type Server struct {
	ID        string
	Name      string
	ProjectID string
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
	// NovaOwned ports were created by Nova for a server's network request, and Nova deletes them
	// with the server; ports the caller created are only detached.
	NovaOwned bool
	Created   time.Time
	Updated   time.Time
	Revision  int
	seq       uint64
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
	ProjectID        string
	Status           string
	Size             int
	VolumeType       string
	ImageID          string
	AvailabilityZone string
	// ServerID is the server the volume is attached to, if any.
	ServerID string
	// DeleteOnTermination volumes go with their server.
	DeleteOnTermination bool
	Bootable            bool
	Created             time.Time
	Updated             time.Time
	seq                 uint64
}

// Network is a Neutron network.
type Network struct {
	ID        string
	Name      string
	External  bool
	Shared    bool
	SubnetIDs []string
	seq       uint64
}

// Subnet is a Neutron IPv4 subnet.
type Subnet struct {
	ID        string
	Name      string
	NetworkID string
	CIDR      string
	GatewayIP string
	seq       uint64
}

// SecurityGroup is a Neutron security group.
type SecurityGroup struct {
	ID          string
	Name        string
	Description string
	seq         uint64
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
	seq   uint64
}

// ServerGroup is a Nova server group.
type ServerGroup struct {
	ID      string
	Name    string
	Policy  string
	Members []string
	seq     uint64
}

// VolumeType is a Cinder volume type.
type VolumeType struct {
	ID   string
	Name string
	seq  uint64
}
