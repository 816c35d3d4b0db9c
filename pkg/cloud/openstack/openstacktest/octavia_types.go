package openstacktest

import "time"

// LoadBalancer is an Octavia load balancer. Introspection returns copies with Listeners and
// Pools filled in, so that one value shows everything a load balancer holds.
type LoadBalancer struct {
	ID          string
	Name        string
	Description string
	ProjectID   string
	// ProvisioningStatus is PENDING_CREATE, PENDING_UPDATE or PENDING_DELETE while a change is
	// being applied (the load balancer is immutable then), and ACTIVE otherwise.
	ProvisioningStatus string
	OperatingStatus    string
	AdminStateUp       bool
	VIPAddress         string
	VIPPortID          string
	VIPSubnetID        string
	VIPNetworkID       string
	// VIPPortOwned is true when Octavia created the VIP port, and so deletes it with the load
	// balancer; a port the caller passed as vip_port_id stays.
	VIPPortOwned bool
	// Provider is the provider driver asked for: amphora (the default) or its alias octavia.
	Provider  string
	Tags      []string
	Listeners []Listener
	Pools     []Pool
	Created   time.Time
	Updated   time.Time
	seq       uint64
}

// Listener is an Octavia listener: a protocol port of a load balancer's VIP.
type Listener struct {
	ID                 string
	Name               string
	Description        string
	LoadBalancerID     string
	ProvisioningStatus string
	OperatingStatus    string
	AdminStateUp       bool
	// Protocol is TCP, HTTP, HTTPS or UDP.
	Protocol      string
	ProtocolPort  int
	DefaultPoolID string
	// ConnectionLimit is -1 for no limit.
	ConnectionLimit      int
	AllowedCIDRs         []string
	InsertHeaders        map[string]string
	TimeoutClientData    int
	TimeoutMemberConnect int
	TimeoutMemberData    int
	TimeoutTCPInspect    int
	Tags                 []string
	Created              time.Time
	Updated              time.Time
	seq                  uint64
}

// Pool is an Octavia pool. Introspection copies carry its members and health monitor.
type Pool struct {
	ID                 string
	Name               string
	Description        string
	LoadBalancerID     string
	ProvisioningStatus string
	OperatingStatus    string
	AdminStateUp       bool
	Protocol           string
	// LBAlgorithm is ROUND_ROBIN, LEAST_CONNECTIONS, SOURCE_IP or SOURCE_IP_PORT.
	LBAlgorithm string
	// SessionPersistence is the session_persistence object as sent, nil when none.
	SessionPersistence map[string]any
	Tags               []string
	Members            []Member
	Monitor            *HealthMonitor
	Created            time.Time
	Updated            time.Time
	seq                uint64
}

// Member is a backend of a pool. Octavia keeps only its address: deleting the server or port
// behind it leaves the member in place.
type Member struct {
	ID                 string
	Name               string
	PoolID             string
	ProvisioningStatus string
	OperatingStatus    string
	AdminStateUp       bool
	Address            string
	ProtocolPort       int
	SubnetID           string
	Weight             int
	Backup             bool
	MonitorAddress     string
	MonitorPort        int
	Tags               []string
	Created            time.Time
	Updated            time.Time
	seq                uint64
}

// HealthMonitor is a pool's health monitor.
type HealthMonitor struct {
	ID                 string
	Name               string
	PoolID             string
	ProvisioningStatus string
	OperatingStatus    string
	AdminStateUp       bool
	// Type is HTTP, HTTPS, PING, TCP, TLS-HELLO or UDP-CONNECT.
	Type           string
	Delay          int
	Timeout        int
	MaxRetries     int
	MaxRetriesDown int
	// HTTPMethod, URLPath, ExpectedCodes, HTTPVersion and DomainName apply to HTTP and HTTPS
	// monitors only; they are empty for the others.
	HTTPMethod    string
	URLPath       string
	ExpectedCodes string
	HTTPVersion   string
	DomainName    string
	Tags          []string
	Created       time.Time
	Updated       time.Time
	seq           uint64
}

// octaviaState is what Octavia holds, guarded by Sim.mu like the rest of the state.
type octaviaState struct {
	// provisionTime is how long a change keeps its load balancer PENDING_*.
	provisionTime time.Duration
	lbs           map[string]*LoadBalancer
	listeners     map[string]*Listener
	pools         map[string]*Pool
	members       map[string]*Member
	monitors      map[string]*HealthMonitor
}

func newOctaviaState() *octaviaState {
	return &octaviaState{
		lbs:       map[string]*LoadBalancer{},
		listeners: map[string]*Listener{},
		pools:     map[string]*Pool{},
		members:   map[string]*Member{},
		monitors:  map[string]*HealthMonitor{},
	}
}

// The provisioning and operating statuses of Octavia objects.
const (
	lbActive        = "ACTIVE"
	lbPendingCreate = "PENDING_CREATE"
	lbPendingUpdate = "PENDING_UPDATE"
	lbPendingDelete = "PENDING_DELETE"
	lbOnline        = "ONLINE"
	lbOffline       = "OFFLINE"
	lbNoMonitor     = "NO_MONITOR"
)
