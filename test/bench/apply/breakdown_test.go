package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/progress"
)

func TestBreakdown(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 14, 0, 0, 0, time.UTC)
	var log bytes.Buffer
	at := func(sec float64, host, msg string) {
		b, err := json.Marshal(progress.Entry{Time: t0.Add(time.Duration(sec * float64(time.Second))), Level: "info", Host: host, Message: msg})
		if err != nil {
			t.Fatal(err)
		}
		log.Write(append(b, '\n'))
	}
	log.WriteString("not an entry\n")
	at(0, "", "upgrade-leader cp-1")
	at(10, "cp-1", "cordoned and drained (10s)")
	at(11, "cp-1", "[upgrade/staticpods] Writing new Static Pod manifests")
	at(14, "cp-1", `[upgrade/staticpods] Moved new manifest to "/etc/kubernetes/manifests/etcd.yaml" and backed up old manifest to "/etc/kubernetes/tmp/x/etcd.yaml"`)
	at(50, "cp-1", `[upgrade/staticpods] Component "etcd" upgraded successfully!`)
	at(50.5, "cp-1", "[upgrade/etcd] Waiting for etcd to become available")
	// kubeadm v1.37 says "Moving" where v1.36 said "Moved".
	at(65, "cp-1", `[upgrade/staticpods] Moving new manifest to "/etc/kubernetes/manifests/kube-apiserver.yaml" and backed up old manifest to "/x"`)
	at(90, "cp-1", `[upgrade/staticpods] Component "kube-apiserver" upgraded successfully!`)
	at(91, "cp-1", "[upgrade/staticpods] current and new manifests of kube-scheduler are equal, skipping upgrade")
	at(95, "cp-1", "[upgrade] the output ends (1 2)")
	at(98, "cp-1", "kubeadm upgrade apply done (1m28s)")
	at(101, "cp-1", "kubelet restarted, node Ready (3s)")
	// A second node whose kubeadm failed: its stages so far are kept, no component is made up.
	at(110, "cp-2", "cordoned and drained (9s)")
	at(112, "cp-2", `[upgrade/staticpods] Moved new manifest to "/etc/kubernetes/manifests/etcd.yaml" and backed up old manifest to "/x"`)
	// A host that printed but was never upgraded is not listed.
	at(120, "worker-1", "something (5s)")

	hosts, err := breakdown(&log)
	if err != nil {
		t.Fatal(err)
	}
	if len(hosts) != 2 {
		t.Fatalf("got %d hosts, want cp-1 and cp-2: %+v", len(hosts), hosts)
	}
	cp1 := hosts[0]
	if cp1.host != "cp-1" || cp1.total() != 10*time.Second+88*time.Second+3*time.Second {
		t.Errorf("cp-1: host %q, total %s; want cp-1, 1m41s", cp1.host, cp1.total())
	}
	if cp1.before != 4*time.Second || cp1.after != 8*time.Second {
		t.Errorf("cp-1: before %s, after %s; want 4s and 8s", cp1.before, cp1.after)
	}
	want := []component{{"etcd", 51 * time.Second, 36 * time.Second}, {"kube-apiserver", 25 * time.Second, 25 * time.Second}}
	if len(cp1.components) != len(want) {
		t.Fatalf("cp-1 components %+v, want %+v", cp1.components, want)
	}
	for i, c := range want {
		if cp1.components[i] != c {
			t.Errorf("cp-1 component %d: %+v, want %+v", i, cp1.components[i], c)
		}
	}
	if strings.Join(cp1.skipped, ",") != "kube-scheduler" {
		t.Errorf("cp-1 skipped %v, want kube-scheduler", cp1.skipped)
	}
	cp2 := hosts[1]
	if cp2.host != "cp-2" || len(cp2.stages) != 1 || len(cp2.components) != 0 {
		t.Errorf("cp-2: %+v; want its one stage and no component", cp2)
	}

	var out bytes.Buffer
	printBreakdown(&out, hosts)
	for _, s := range []string{"cp-1: upgrade step", "kubeadm: etcd", "(up after 36.0s)", "kubeadm left unchanged: kube-scheduler", "cp-2: upgrade step"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("the printed breakdown lacks %q:\n%s", s, out.String())
		}
	}
}
