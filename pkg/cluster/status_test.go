package cluster

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func testCert(t *testing.T, cn string, notAfter time.Time, ca bool) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn}, NotBefore: notAfter.Add(-365 * 24 * time.Hour),
		NotAfter: notAfter, IsCA: ca, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestParseStatusOutput(t *testing.T) {
	now := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	// The script itself, on files as kubeadm lays them out.
	root := t.TempDir()
	kc := clientcmdapi.NewConfig()
	kc.AuthInfos["kubernetes-admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: testCert(t, "kubernetes-admin", now.Add(20*24*time.Hour), false),
		ClientKeyData: []byte("-----BEGIN EC PRIVATE KEY-----\nstatus-test-private-key\n-----END EC PRIVATE KEY-----\n")}
	admin, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	kubelet := clientcmdapi.NewConfig()
	kubelet.AuthInfos["default-auth"] = &clientcmdapi.AuthInfo{ClientCertificate: "/var/lib/kubelet/pki/kubelet-client-current.pem"}
	kubeletConf, _ := clientcmd.Write(*kubelet)
	for f, data := range map[string][]byte{
		"etc/kubernetes/manifests/kube-apiserver.yaml": []byte("kind: Pod\n"),
		"etc/kubernetes/pki/ca.crt":                    testCert(t, "kubernetes", now.Add(3650*24*time.Hour), true),
		"etc/kubernetes/pki/apiserver.crt":             testCert(t, "kube-apiserver", now.Add(300*24*time.Hour), false),
		"etc/kubernetes/admin.conf":                    admin,
		"etc/kubernetes/kubelet.conf":                  kubeletConf,
	} {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	script := strings.ReplaceAll(statusScript, "/etc/kubernetes", root+"/etc/kubernetes")
	script = strings.ReplaceAll(script, "https://127.0.0.1:", "https://127.0.0.1.invalid:")
	out, err := exec.Command("bash", "-c", script).Output()
	if err != nil {
		t.Fatalf("the status script: %v\n%s", err, out)
	}
	if strings.Contains(string(out), base64.StdEncoding.EncodeToString([]byte("status-test-private-key"))[:12]) || strings.Contains(string(out), "PRIVATE") {
		t.Fatal("the status script sends a kubeconfig's private key")
	}
	api, certs, err := parseStatusOutput(out)
	if err != nil {
		t.Fatal(err)
	}
	if api != "down" {
		t.Errorf("an API server that does not answer is %q, want down", api)
	}
	api = "ok"
	for i := range certs {
		certs[i].File = strings.TrimPrefix(certs[i].File, root)
	}
	if api != "ok" || len(certs) != 3 {
		t.Fatalf("api %q, %d certificates: %+v", api, len(certs), certs)
	}
	if certs[0].File != "/etc/kubernetes/admin.conf" || certs[0].Subject != "kubernetes-admin" || !certs[2].CA {
		t.Errorf("certificates not soonest first, or misread: %+v", certs)
	}

	st := &Status{apiRead: true, Hosts: []HostStatus{
		{Name: "cp-1", Role: "control-plane", Reachable: true, Registered: true, Ready: true, API: api, Certificates: certs},
		{Name: "cp-2", Address: "10.0.0.2", Role: "control-plane", Error: "dial tcp 10.0.0.2:22: connect: no route to host"},
		{Name: "worker-1", Role: "worker", Reachable: true, Registered: true},
	}, Etcd: []EtcdStatus{{Name: "cp-1", Healthy: true, Alarms: []string{"NOSPACE"}}, {Name: "cp-2", PeerURL: "https://10.0.0.2:2380"}},
		Pools: []PoolStatus{{Name: "pool1", Replicas: 2, Ready: 1}}}
	problems := strings.Join(st.judge(now), "\n")
	for _, want := range []string{
		"cp-2 (10.0.0.2) cannot be reached over SSH: dial tcp",
		"cp-2 has no Node in the cluster",
		"node worker-1 is not Ready",
		"certificate /etc/kubernetes/admin.conf (kubernetes-admin) on cp-1 expires in 480h0m0s, on 2026-12-16: renew it",
		"etcd member cp-2 (https://10.0.0.2:2380) is not healthy",
		"etcd member cp-1 has the alarm NOSPACE",
		"worker pool pool1 has 1 of 2 machines ready",
	} {
		if !strings.Contains(problems, want) {
			t.Errorf("problems lack %q:\n%s", want, problems)
		}
	}
	if strings.Contains(problems, "holder") {
		t.Errorf("a problem speaks of the apply lock's holder:\n%s", problems)
	}
	if strings.Contains(problems, "apiserver.crt") || strings.Contains(problems, "API server on cp-2") {
		t.Errorf("a healthy certificate or an unreachable host's API is reported:\n%s", problems)
	}

	st.Problems, st.Healthy = st.judge(now), false
	var text, js bytes.Buffer
	if err := PrintStatus(&text, st, false, now); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"cp-2", "unreachable", "first expiry 2026-12-16 (admin.conf, in 20d)", "unhealthy:", "pool1", "ALARMS", "NOSPACE",
		"Kubernetes unknown\n"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, text.String())
		}
	}
	if err := PrintStatus(&js, st, true, now); err != nil {
		t.Fatal(err)
	}
	var back Status
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Problems) != len(st.Problems) || back.Healthy {
		t.Errorf("JSON does not round-trip: %v\n%s", err, js.String())
	}
}

func TestStatusHealthy(t *testing.T) {
	now := time.Now()
	st := &Status{apiRead: true, Hosts: []HostStatus{
		{Name: "cp-1", Role: "control-plane", Reachable: true, Registered: true, Ready: true, API: "ok",
			Certificates: []Certificate{{File: "/etc/kubernetes/pki/apiserver.crt", NotAfter: now.Add(CertificateWarning + time.Hour)}}},
	}, Etcd: []EtcdStatus{{Name: "cp-1", Healthy: true}}}
	if p := st.judge(now); len(p) != 0 {
		t.Errorf("a healthy cluster has problems: %v", p)
	}
	st.Hosts[0].API = "HTTP 500"
	if p := st.judge(now); len(p) != 1 || !strings.Contains(p[0], "not ready (/readyz: HTTP 500)") {
		t.Errorf("problems %v", p)
	}
	// A member that answers but has an alarm makes the cluster unhealthy.
	st.Hosts[0].API, st.Etcd[0].Alarms = "ok", []string{"NOSPACE"}
	if p := st.judge(now); len(p) != 1 || !strings.Contains(p[0], "etcd member cp-1 has the alarm NOSPACE: its database reached etcd's space quota") ||
		!strings.Contains(p[0], "slipway etcd defragment") {
		t.Errorf("problems with an alarm: %v", p)
	}
	st.Etcd[0].Alarms = nil
	// Without the API, no host is blamed for a missing Node: the API's problem is reported.
	st.apiRead, st.Hosts[0].API, st.Hosts[0].Registered = false, "ok", false
	if p := st.judge(now); len(p) != 0 {
		t.Errorf("problems without the API: %v", p)
	}
}

func TestParseStatusOutputRejects(t *testing.T) {
	for _, out := range []string{
		"file /etc/kubernetes/pki/ca.crt !!notbase64\n",
		"file /etc/kubernetes/pki/ca.crt " + base64.StdEncoding.EncodeToString([]byte("not a pem")) + "\n",
	} {
		if _, _, err := parseStatusOutput([]byte(out)); err == nil || !strings.Contains(err.Error(), "/etc/kubernetes/") {
			t.Errorf("parseStatusOutput(%q) = %v, want an error naming the file", out, err)
		}
	}
}

func TestPrintCertificates(t *testing.T) {
	now := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	hosts := []HostCertificates{
		{Host: "cp-1", Certificates: []Certificate{
			{File: "/etc/kubernetes/admin.conf", Subject: "kubernetes-admin", NotAfter: now.Add(10 * 24 * time.Hour)},
			{File: "/etc/kubernetes/pki/ca.crt", Subject: "kubernetes", NotAfter: now.Add(3650 * 24 * time.Hour), CA: true}}},
		{Host: "cp-2", Error: "connecting to cp-2: no route to host"},
	}
	var text, js bytes.Buffer
	problems, err := PrintCertificates(&text, hosts, false, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 2 || !strings.Contains(problems[0], "admin.conf on cp-1 expires on 2026-12-06") || !strings.Contains(problems[1], "cp-2: connecting") {
		t.Errorf("problems %q", problems)
	}
	for _, want := range []string{"/etc/kubernetes/pki/ca.crt", "3650d", "(unreadable: connecting to cp-2"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, text.String())
		}
	}
	if _, err := PrintCertificates(&js, hosts, true, now); err != nil {
		t.Fatal(err)
	}
	var back []HostCertificates
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back) != 2 || len(back[0].Certificates) != 2 {
		t.Errorf("JSON: %v\n%s", err, js.String())
	}
}

func TestSnapshotStatus(t *testing.T) {
	out := []byte("readyz 200\nsnapshot-timer exit-code\nsnapshot-newest 1764316800.2500000000 cp-1-20251128T080000.250Z.db\n")
	s := parseSnapshotStatus(out)
	want := &SnapshotStatus{Scheduled: true, LastRun: "exit-code", Newest: "cp-1-20251128T080000.250Z.db", NewestAt: time.Unix(1764316800, 0).UTC()}
	if s == nil || *s != *want {
		t.Fatalf("parseSnapshotStatus = %+v, want %+v", s, want)
	}
	if s := parseSnapshotStatus([]byte("readyz 200\n")); s != nil {
		t.Errorf("a host without the timer: %+v, want nil", s)
	}
	cp := func(s *SnapshotStatus) HostStatus {
		return HostStatus{Name: "cp-1", Role: "control-plane", Reachable: true, Registered: true, Ready: true, API: "ok", Snapshots: s}
	}
	for _, tc := range []struct {
		name   string
		wanted bool
		host   HostStatus
		want   string
	}{
		{"scheduled and fine", true, cp(&SnapshotStatus{Scheduled: true, LastRun: "success"}), ""},
		{"the last run failed", true, cp(want), "the last scheduled etcd snapshot on cp-1 failed (exit-code)"},
		{"wanted, not scheduled", true, cp(nil), "etcd.snapshots is set, but cp-1 has no snapshot timer"},
		{"not wanted, not there", false, cp(nil), ""},
	} {
		st := &Status{Hosts: []HostStatus{tc.host}, snapshotsWanted: tc.wanted, apiRead: true}
		got := strings.Join(st.judge(time.Now()), "; ")
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: problems %q, want %q", tc.name, got, tc.want)
		}
	}
}
