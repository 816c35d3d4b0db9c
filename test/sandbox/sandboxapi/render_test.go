package sandboxapi

import (
	"crypto/ed25519"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/slipway-dev/slipway/test/golden"
)

func TestPlan(t *testing.T) {
	subnet := netip.MustParsePrefix("172.30.0.0/24")
	tests := []struct {
		name      string
		n, cps    int
		lb        bool
		wantNames []string
		wantIPs   []string
		wantErr   bool
	}{
		{name: "one host", n: 1, cps: 1, wantNames: []string{"cp-1"}, wantIPs: []string{"172.30.0.11"}},
		{name: "ha with lb", n: 4, cps: 3, lb: true,
			wantNames: []string{"cp-1", "cp-2", "cp-3", "worker-1", "lb"},
			wantIPs:   []string{"172.30.0.11", "172.30.0.12", "172.30.0.13", "172.30.0.21", "172.30.0.10"}},
		{name: "more control planes than hosts", n: 2, cps: 3, wantErr: true},
		{name: "no hosts", n: 0, cps: 0, wantErr: true},
		{name: "ten control planes", n: 10, cps: 10, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hosts, err := plan("s", subnet, tt.n, tt.cps, tt.lb)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if len(hosts) != len(tt.wantNames) {
				t.Fatalf("got %d hosts, want %d: %+v", len(hosts), len(tt.wantNames), hosts)
			}
			for i, h := range hosts {
				if h.Name != tt.wantNames[i] || h.IP != tt.wantIPs[i] || h.Container != "slipway-s-"+h.Name {
					t.Errorf("host %d = %+v, want %s at %s", i, h, tt.wantNames[i], tt.wantIPs[i])
				}
			}
		})
	}
}

func TestParseSubnet(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    string
		wantErr bool
	}{
		{in: "172.30.0.0/24", want: "172.30.0.0/24"},
		{in: "172.30.0.7/24", want: "172.30.0.0/24"},
		{in: "172.30.0.0/16", wantErr: true},
		{in: "fd00::/64", wantErr: true},
		{in: "nonsense", wantErr: true},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseSubnet(tt.in)
			if (err != nil) != tt.wantErr || (err == nil && got.String() != tt.want) {
				t.Errorf("parseSubnet(%q) = %v, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// fixture is a sandbox state as up would record it, with fixed keys and paths.
func fixture() *Sandbox {
	subnet := netip.MustParsePrefix("172.30.0.0/24")
	hosts, _ := plan("demo", subnet, 4, 3, true)
	for i := range hosts {
		if hosts[i].Role != LoadBalancer {
			// Deterministic keys keep the golden files stable.
			seed := make([]byte, ed25519.SeedSize)
			seed[0] = byte(i)
			pub, err := ssh.NewPublicKey(ed25519.NewKeyFromSeed(seed).Public())
			if err != nil {
				panic(err)
			}
			hosts[i].HostKey = keyOnly(authorizedKey(pub, ""))
		}
	}
	return &Sandbox{Dir: "/state", State: State{
		Name: "demo", Network: "slipway-demo", Subnet: subnet.String(), Image: "slipway-sandbox-node:x", CgroupV1: true,
		Assets: Assets{IP: "172.30.0.2", Registry: "http://172.30.0.2:5000", Files: "http://172.30.0.2:8080",
			ResolvConf: "/etc/resolv.upstream.conf"},
		Versions: []string{"v1.35.4", "v1.36.3"}, Kubernetes: "v1.36.3", Hosts: hosts, Endpoint: "172.30.0.10:6443",
	}}
}

func TestRendering(t *testing.T) {
	sb := fixture()
	pool := fixture()
	pool.Pool = &Pool{Network: "sandbox", Replicas: 2}
	for _, tt := range []struct {
		golden string
		render func() ([]byte, error)
	}{
		{"tf.json", sb.tfOutput},
		{"slipway.yaml", sb.manifest},
		{"slipway-pool.yaml", pool.manifest},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			got, err := tt.render()
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tt.golden+".golden"), got)
		})
	}
}

func TestTFOutputWithoutWorkers(t *testing.T) {
	sb := fixture()
	sb.Hosts = sb.HostsWith(ControlPlane)
	data, err := sb.tfOutput()
	if err != nil {
		t.Fatal(err)
	}
	if s := string(data); contains(s, "slipway_static_workers") {
		t.Errorf("tf.json lists a static worker pool although there are no workers:\n%s", s)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
