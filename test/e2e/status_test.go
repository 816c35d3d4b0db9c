package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/cluster"
	"github.com/slipway-dev/slipway/pkg/kube"
)

// statusOf runs slipway status -o json.
func (h *harness) statusOf(manifest string) (cluster.Status, result) {
	h.t.Helper()
	r := h.slipway(nil, "status", "-m", manifest, "-o", "json")
	var st cluster.Status
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		h.t.Fatalf("slipway status -o json (exit code %d) printed no status: %v\n%s", r.code, err, r.out)
	}
	return st, r
}

// checkStatus checks slipway status on the healthy HA cluster, with one control plane stopped
// (it names it and exits 4), and once the control plane is back.
func (h *harness) checkStatus(t *testing.T, manifest string, hosts []string, controlPlanes int) {
	st, r := h.statusOf(manifest)
	if r.code != 0 || !st.Healthy || len(st.Hosts) != len(hosts) || len(st.Etcd) != controlPlanes {
		t.Fatalf("status of a healthy cluster: exit code %d, healthy %t, %d hosts, %d etcd members; problems: %v",
			r.code, st.Healthy, len(st.Hosts), len(st.Etcd), st.Problems)
	}
	for _, hs := range st.Hosts {
		if !hs.Reachable || !hs.Ready || hs.Kubelet != previous {
			t.Errorf("host %s: reachable %t, ready %t, kubelet %s", hs.Name, hs.Reachable, hs.Ready, hs.Kubelet)
		}
		if hs.Role == "control-plane" {
			if hs.API != "ok" || len(hs.Certificates) < 10 {
				t.Errorf("control plane %s: API %q, %d certificates", hs.Name, hs.API, len(hs.Certificates))
			} else if left := time.Until(hs.Certificates[0].NotAfter); left < 300*24*time.Hour {
				t.Errorf("control plane %s: the first certificate expires in %s; kubeadm issues them for a year", hs.Name, left)
			}
		}
	}

	r = h.slipway(nil, "certificates", "check", "-m", manifest, "-o", "json")
	var certs []cluster.HostCertificates
	if err := json.Unmarshal([]byte(r.stdout), &certs); r.code != 0 || err != nil || len(certs) != controlPlanes {
		t.Errorf("certificates check: exit code %d, %v, %d control planes\n%s", r.code, err, len(certs), r.out)
	}
	for _, hc := range certs {
		if hc.Error != "" || len(hc.Certificates) < 10 {
			t.Errorf("certificates of %s: %d, error %q", hc.Host, len(hc.Certificates), hc.Error)
		}
	}

	ctx := context.Background()
	if err := h.sb.Stop(ctx, "cp-2"); err != nil {
		t.Fatal(err)
	}
	st, r = h.statusOf(manifest)
	problems := strings.Join(st.Problems, "\n")
	if r.code != 4 || st.Healthy || !strings.Contains(problems, "cp-2 ("+h.host("cp-2").IP+") cannot be reached over SSH") ||
		!strings.Contains(problems, "etcd member cp-2") {
		t.Errorf("status with cp-2 stopped: exit code %d, healthy %t; want 4, naming cp-2 unreachable and its etcd member unhealthy:\n%s", r.code, st.Healthy, problems)
	}
	if text := h.slipway(nil, "status", "-m", manifest); text.code != 4 || !strings.Contains(text.stdout, "unhealthy:") || !strings.Contains(text.stdout, "unreachable") {
		t.Errorf("status as text with cp-2 stopped: exit code %d; want 4, a table showing cp-2 unreachable and the problems:\n%s", text.code, text.out)
	}
	if err := h.sb.Start(ctx, "cp-2"); err != nil {
		t.Fatal(err)
	}
	err := kube.Wait(ctx, "slipway status to report the cluster healthy again", 5*time.Minute, func(context.Context) (bool, string, error) {
		st, r := h.statusOf(manifest)
		return r.code == 0 && st.Healthy, fmt.Sprintf("exit code %d: %s", r.code, strings.Join(st.Problems, "; ")), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
