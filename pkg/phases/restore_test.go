package phases

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/encryption"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/ssh/sshtest"
)

// TestRestoreEtcd: the leader gets the PKI backup's files (keys 0600, the rest 0644, the etcd
// directory made first) and the snapshot in a root-only directory, then one script, with the
// cluster's etcd image and the member's name and peer URL in its environment, whose body runs
// as a function with /dev/null as input (ctr run would read the rest of a script from bash's
// input otherwise).
func TestRestoreEtcd(t *testing.T) {
	snap := filepath.Join(t.TempDir(), "etcd.db")
	if err := os.WriteFile(snap, []byte("snapshot bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &v1beta1.Cluster{Versions: v1beta1.Versions{Kubernetes: "v1.36.3"}, RegistryConfiguration: &v1beta1.RegistryConfiguration{OverwriteRegistry: "mirror.example.com/k8s"},
		ControlPlane: v1beta1.ControlPlane{Hosts: []v1beta1.Host{{PublicAddress: "10.0.0.1", PrivateAddress: "192.168.0.1", Hostname: "cp-1", IsLeader: true}}}}
	nodes := inventory.Nodes(c)
	fleet := &sshtest.Fleet{}
	pki := map[string][]byte{"ca.crt": []byte("crt"), "ca.key": []byte("key"), "etcd/ca.key": []byte("etcd key"), "sa.pub": []byte("pub")}
	r := NewRun(Config{Manifest: c, Nodes: nodes, SSH: fleet, Restore: &Restore{Snapshot: snap, PKI: pki}})
	if err := restoreEtcd(context.Background(), r, "cp-1"); err != nil {
		t.Fatal(err)
	}
	h := fleet.Get(nodes[0].Target.String())
	want := "install -d -m 0755 /etc/kubernetes/pki /etc/kubernetes/pki/etcd; upload /etc/kubernetes/pki/ca.crt; upload /etc/kubernetes/pki/ca.key; " +
		"upload /etc/kubernetes/pki/etcd/ca.key; upload /etc/kubernetes/pki/sa.pub; install -d -m 0700 /var/lib/slipway/restore; " +
		"upload /var/lib/slipway/restore/snapshot.db; script restore-etcd"
	if got := strings.Join(h.Commands(), "; "); got != want {
		t.Errorf("commands:\n got %s\nwant %s", got, want)
	}
	for path, mode := range map[string]os.FileMode{"/etc/kubernetes/pki/ca.key": 0o600, "/etc/kubernetes/pki/etcd/ca.key": 0o600, "/etc/kubernetes/pki/ca.crt": 0o644, "/var/lib/slipway/restore/snapshot.db": 0o600} {
		if f, ok := h.File(path); !ok || f.Mode != mode || f.Owner != "root" {
			t.Errorf("%s: %v %+v; want mode %o, owner root", path, ok, f, mode)
		}
	}
	calls := h.Calls()
	script := calls[len(calls)-1]
	for _, env := range []string{"ETCD_IMAGE=mirror.example.com/k8s/etcd:3.6.8-0", "MEMBER=cp-1", "PEER_URL=https://192.168.0.1:2380"} {
		if !slices.Contains(script.Env, env) {
			t.Errorf("the script's environment %v lacks %s", script.Env, env)
		}
	}
	if !strings.HasSuffix(script.Script, "\n}\nmain </dev/null\n") || !strings.Contains(script.Script, "--bump-revision 1000000000 --mark-compacted") {
		t.Errorf("the script does not run as one function from /dev/null with the revision bumped:\n%s", script.Script)
	}

	// Without --restore-from the step cannot run.
	r = NewRun(Config{Manifest: c, Nodes: nodes, SSH: &sshtest.Fleet{}})
	if err := restoreEtcd(context.Background(), r, "cp-1"); err == nil || !strings.Contains(err.Error(), "--restore-from") {
		t.Errorf("restore-etcd without a source: %v", err)
	}
}

// TestRestoreEtcdWithEncryption: the PKI backup of a cluster that encrypted Secrets holds its
// encryption configuration; restore-etcd puts it on the leader, root-only, before the snapshot
// is restored, its keys registered for hiding and in no command line or progress line, and
// kubeadm init then keeps it as it is (a key rotation under way included) rather than make a
// new key, so that the restored Secrets read.
func TestRestoreEtcdWithEncryption(t *testing.T) {
	r, h, secrets := kubeadmRun(t)
	r.cfg.Manifest.Encryption.Enabled = true
	var log bytes.Buffer
	r.cfg.Log = &log
	snap := filepath.Join(t.TempDir(), "etcd.db")
	if err := os.WriteFile(snap, []byte("snapshot bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	var keys []encryption.Key
	for _, name := range []string{"key-4", "key-3"} {
		k, err := encryption.NewKey(name)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	// Backed up half-way through a rotation: key-4 encrypts, key-3 still reads.
	conf, err := encryption.Render(encryption.Config{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	r.cfg.Restore = &Restore{Snapshot: snap, PKI: map[string][]byte{"ca.crt": []byte("crt")}, Encryption: conf}
	ctx := context.Background()
	if err := restoreEtcd(ctx, r, "cp"); err != nil {
		t.Fatal(err)
	}
	f, ok := h.File(encryption.File)
	if !ok || f.Mode != 0o600 || f.Owner != "root:root" || !bytes.Equal(f.Data, conf) {
		t.Fatalf("%s on the leader: %v, mode %o, owner %q, the backup's %t", encryption.File, ok, f.Mode, f.Owner, bytes.Equal(f.Data, conf))
	}
	cmds := strings.Join(h.Commands(), "; ")
	want := "upload /etc/kubernetes/pki/ca.crt; install -d -m 0700 -o root -g root /etc/kubernetes/encryption; upload /etc/kubernetes/encryption/config.yaml; install -d -m 0700 /var/lib/slipway/restore"
	if !strings.Contains(cmds, want) {
		t.Errorf("commands:\n %s\nwant them to hold %s", cmds, want)
	}
	// The leader holds the file now, as the encryption phases read it.
	h.On(`^script encryption-state$`, sshtest.Response{Stdout: "file\n"})
	if err := initCluster(ctx, noAPI{r}, "cp"); err != nil {
		t.Fatal(err)
	}
	if f, _ := h.File(encryption.File); !bytes.Equal(f.Data, conf) {
		t.Error("kubeadm init replaced the restored encryption configuration")
	}
	for _, c := range h.Commands() {
		if strings.Contains(c, "make key") {
			t.Errorf("a new key was made: %s", c)
		}
	}
	if cfg, _ := h.File(initConfig); !strings.Contains(string(cfg.Data), "value: "+encryption.File) {
		t.Errorf("the init configuration does not name %s", encryption.File)
	}
	for _, k := range keys {
		key := base64.StdEncoding.EncodeToString(k.Secret)
		if secrets.Redact("x"+key+"x") != "x[redacted]x" {
			t.Errorf("%s is not registered for hiding", k.Name)
		}
		for _, call := range h.Calls() {
			if strings.Contains(call.Command+call.Script+strings.Join(call.Env, " "), key) {
				t.Errorf("%s is in %s", k.Name, call.Command)
			}
		}
		if strings.Contains(log.String(), key) {
			t.Errorf("%s is in the progress", k.Name)
		}
	}
	if !strings.Contains(log.String(), "the encryption configuration of the PKI backup (sha256:") {
		t.Errorf("progress does not say the encryption configuration was restored:\n%s", log.String())
	}
}
