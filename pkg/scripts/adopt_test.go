package scripts_test

import (
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/scripts"
)

func TestAdoptGolden(t *testing.T) {
	for name, dns := range map[string][]string{"adopt-debian": nil, "adopt-debian-upstream-dns": {"10.0.0.2", "10.0.0.3"}} {
		t.Run(name, func(t *testing.T) {
			got, err := scripts.Adopt(scripts.OS{ID: "debian", VersionID: "12"}, dns)
			if err != nil {
				t.Fatal(err)
			}
			checkScript(t, name, got)
		})
	}
}

// TestAdoptTouchesOnlySlipwaysFiles holds the adopt script to its promise: it names no
// containerd, package, swap, module or sysctl command, which would change another tool's host.
func TestAdoptTouchesOnlySlipwaysFiles(t *testing.T) {
	got, err := scripts.Adopt(scripts.OS{ID: "ubuntu", VersionID: "24.04"}, []string{"10.0.0.2"})
	if err != nil {
		t.Fatal(err)
	}
	body := got[strings.Index(got, "\nmain() {"):]
	for _, forbidden := range []string{"systemctl", "containerd", "apt-get", "swapoff", "modprobe", "sysctl", "kubeadm", "kubelet "} {
		if strings.Contains(body, forbidden) {
			t.Errorf("the adopt script runs %q:\n%s", forbidden, body)
		}
	}
	for _, want := range []string{scripts.KubeletResolvConf, "nameserver"} {
		if !strings.Contains(body, want) {
			t.Errorf("the adopt script does not make %s (no %q)", scripts.KubeletResolvConf, want)
		}
	}
}

func TestAdoptRejects(t *testing.T) {
	if _, err := scripts.Adopt(scripts.OS{ID: "debian", VersionID: "12"}, []string{"10.0.0.2; reboot"}); err == nil || !strings.Contains(err.Error(), "not an IP address") {
		t.Errorf("an upstream DNS server that is not an address: %v; want an error", err)
	}
	if _, err := scripts.Adopt(scripts.OS{ID: "windows", VersionID: "11"}, nil); err == nil {
		t.Error("an unsupported OS: want an error")
	}
}
