package scripts_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/scripts"
)

// runProbe runs the probe the way the SSH layer does (bash -s, script on stdin) on this
// machine, as the given command prefix (nil: the current user).
func runProbe(t *testing.T, root string, prefix ...string) scripts.Facts {
	t.Helper()
	args := append(prefix, "bash", "-s")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin = strings.NewReader(scripts.Probe())
	cmd.Env = append(os.Environ(), "SLIPWAY_PROBE_ROOT="+root)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("probe: %v\nstderr:\n%s", err, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("probe wrote to stderr:\n%s", stderr.String())
	}
	facts, err := scripts.ParseProbe(string(out))
	if err != nil {
		t.Fatalf("ParseProbe: %v\noutput:\n%s", err, out)
	}
	return facts
}

func TestProbeThisHost(t *testing.T) {
	f := runProbe(t, "")
	osRelease, err := os.ReadFile("/etc/os-release")
	if err != nil {
		t.Skipf("no /etc/os-release to compare with: %v", err)
	}
	if !strings.Contains(string(osRelease), "\nID="+f.OS.ID+"\n") && !strings.HasPrefix(string(osRelease), "ID="+f.OS.ID+"\n") &&
		!strings.Contains(string(osRelease), "ID=\""+f.OS.ID+"\"") {
		t.Errorf("os_id %q is not the ID in /etc/os-release:\n%s", f.OS.ID, osRelease)
	}
	host, _ := os.Hostname()
	if f.Hostname != host {
		t.Errorf("hostname = %q, want %q", f.Hostname, host)
	}
	if _, err := f.GoArch(); err != nil {
		t.Error(err)
	}
	wantCgroup := 1
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		wantCgroup = 2
	}
	if f.CgroupVersion != wantCgroup {
		t.Errorf("cgroup_version = %d, want %d", f.CgroupVersion, wantCgroup)
	}
	if os.Getuid() == 0 && (!f.SudoOK || !f.Privileged) {
		t.Errorf("as root: sudo_ok %v, privileged %v; want both true", f.SudoOK, f.Privileged)
	}
}

// fakeRoot lays out the files of an initialised control plane under a directory that every
// user may read, except /var/lib/etcd, which is root's only (as kubeadm makes it).
func fakeRoot(t *testing.T, notAfter time.Time) string {
	t.Helper()
	root := t.TempDir()
	for d := root; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"etc/kubernetes/admin.conf":        "kind: Config\n",
		"etc/kubernetes/kubelet.conf":      "kind: Config\n",
		"etc/kubernetes/pki/apiserver.crt": selfSigned(t, notAfter),
		"etc/resolv.conf":                  "nameserver 127.0.0.11\noptions ndots:0\n",
		"run/systemd/resolve/resolv.conf":  "nameserver 10.1.2.3\nnameserver 10.1.2.4\nsearch example.com\n",
		"var/lib/etcd/member/snap/db":      "",
	}
	for name, data := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(root, "var/lib/etcd"), 0o700); err != nil {
		t.Fatal(err)
	}
	return root
}

func selfSigned(t *testing.T, notAfter time.Time) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: notAfter.Add(-time.Hour), NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func TestProbeInitialisedHost(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Fatalf("openssl is needed to read certificate expiry (Debian: apt-get install openssl): %v", err)
	}
	notAfter := time.Date(2027, 3, 4, 5, 6, 7, 0, time.UTC)
	root := fakeRoot(t, notAfter)

	f := runProbe(t, root)
	if !f.AdminConf || !f.KubeletConf {
		t.Errorf("admin_conf %v, kubelet_conf %v; want both true", f.AdminConf, f.KubeletConf)
	}
	if !f.APIServerCertExpiry.Equal(notAfter) {
		t.Errorf("apiserver_cert_expiry = %v, want %v", f.APIServerCertExpiry, notAfter)
	}
	if !f.ResolvLoopback || strings.Join(f.ResolvUpstream, ",") != "10.1.2.3,10.1.2.4" {
		t.Errorf("resolv_loopback %v, resolv_upstream %v; want true and systemd-resolved's servers", f.ResolvLoopback, f.ResolvUpstream)
	}
	if os.Getuid() != 0 {
		return
	}
	if !f.EtcdData {
		t.Error("etcd_data = false as root, want true")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skipf("no setpriv to run the probe as an unprivileged user: %v", err)
	}
	// As nobody without sudo: the readable facts are the same, the root-only one is not seen.
	u := runProbe(t, root, setpriv, "--reuid=65534", "--regid=65534", "--clear-groups")
	if u.SudoOK || u.Privileged || u.EtcdData {
		t.Errorf("as nobody: sudo_ok %v, privileged %v, etcd_data %v; want all false", u.SudoOK, u.Privileged, u.EtcdData)
	}
	if !u.AdminConf || !u.APIServerCertExpiry.Equal(notAfter) || u.Hostname != f.Hostname {
		t.Errorf("as nobody the readable facts differ: %+v", u)
	}
}

func TestParseProbe(t *testing.T) {
	valid := "os_id=ubuntu\nos_version_id=24.04\narch=aarch64\nkernel=6.8.0\nhostname=n1\nswap_active=false\n" +
		"cgroup_version=2\nsudo_ok=true\nprivileged=true\ncontainerd_version=1.7.12\ncontainerd_active=true\n" +
		"kubelet_version=v1.36.3\nkubelet_active=true\nkubeadm_version=v1.36.3\nkubectl_version=v1.36.3\n" +
		"admin_conf=true\nkubelet_conf=true\netcd_data=true\napiserver_cert_expiry=2027-01-02T03:04:05Z\n" +
		"resolv_loopback=false\nresolv_upstream=10.0.0.2\nfuture_fact=x=y\n"
	f, err := scripts.ParseProbe(valid)
	if err != nil {
		t.Fatal(err)
	}
	arch, _ := f.GoArch()
	if f.OS != (scripts.OS{ID: "ubuntu", VersionID: "24.04"}) || arch != "arm64" || f.CgroupVersion != 2 ||
		f.KubeletVersion != "v1.36.3" || !f.EtcdData || f.APIServerCertExpiry.Year() != 2027 || f.ResolvUpstream[0] != "10.0.0.2" {
		t.Errorf("ParseProbe = %+v", f)
	}
	tests := []struct{ name, out, wantErr string }{
		{"truncated", "os_id=debian\narch=x86_64\n", "the probe did not finish"},
		{"not key=value", valid + "garbage\n", "is not key=value"},
		{"bad bool", strings.Replace(valid, "swap_active=false", "swap_active=maybe", 1), "swap_active=\"maybe\""},
		{"bad cgroup", strings.Replace(valid, "cgroup_version=2", "cgroup_version=3", 1), "cgroup_version"},
		{"bad time", strings.Replace(valid, "2027-01-02T03:04:05Z", "Jan 2 2027", 1), "RFC 3339"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := scripts.ParseProbe(tt.out); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
	if _, err := (scripts.Facts{Arch: "s390x"}).GoArch(); err == nil {
		t.Error("GoArch accepted s390x")
	}
}
