package hosts

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
	"github.com/slipway-dev/slipway/test/golden"
)

func TestHaproxyConfig(t *testing.T) {
	lb := openstacktest.LoadBalancerInfo{ID: "7f0c5bd2-lb", Name: "cluster-api", VIP: "192.168.1.5", AdminUp: true,
		Listeners: []openstacktest.ListenerInfo{{
			ID: "l1", Protocol: "TCP", Port: 6443, AllowedCIDRs: []string{"10.0.0.0/8", "192.168.1.0/24"}, AdminUp: true,
			Members: []openstacktest.MemberInfo{
				{ID: "m1", Address: "192.168.1.11", Port: 6443, Weight: 1, AdminUp: true},
				{ID: "m2", Address: "192.168.1.12", Port: 6443, Weight: 0, AdminUp: true},
				{ID: "m3", Address: "192.168.1.13", Port: 6443, Weight: 1, AdminUp: false},
			},
			Monitor: &openstacktest.MonitorInfo{Type: "HTTPS", Delay: 5, Timeout: 3, MaxRetries: 2, URLPath: "/readyz", ExpectedCodes: "200"},
		}, {
			ID: "l2", Protocol: "HTTP", Port: 80, Method: "LEAST_CONNECTIONS", AdminUp: true,
			Members: []openstacktest.MemberInfo{{ID: "m4", Address: "192.168.1.21", Port: 30080, Weight: 3, AdminUp: true}},
			Monitor: &openstacktest.MonitorInfo{Type: "HTTP", Delay: 2, MaxRetries: 3, HTTPMethod: "HEAD", ExpectedCodes: "200-204"},
		}, {
			ID: "l3", Protocol: "TCP", Port: 22, Method: "SOURCE_IP", AdminUp: false,
		}},
	}
	got := haproxyConfigOf(lb)
	golden.Check(t, filepath.Join("testdata", "haproxy.cfg"), []byte(got))

	// haproxy itself, from the node image the amphorae run, must accept it.
	if testing.Short() {
		return
	}
	if _, err := exec.Command("docker", "info").CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true, and no Docker daemon answers")
		}
		t.Skip("no Docker daemon: cannot check the config with haproxy -c")
	}
	img, err := NodeImage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("docker", "run", "--rm", "-i", "--entrypoint", "sh", img, "-c", "cat >/tmp/h.cfg && haproxy -c -f /tmp/h.cfg")
	cmd.Stdin = strings.NewReader(got)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("haproxy -c: %v\n%s", err, out)
	}
}
