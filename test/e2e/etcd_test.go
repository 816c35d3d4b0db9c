package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/cluster"
	"github.com/slipway-dev/slipway/pkg/etcd"
)

// checkEtcd lists the members, saves a snapshot that must hold data written just before, and
// defragments every member, the leader last.
func (h *harness) checkEtcd(t *testing.T, manifest string, controlPlanes int) {
	r := h.slipway(nil, "etcd", "members", "-m", manifest, "-o", "json")
	var ms []etcd.Member
	if err := json.Unmarshal([]byte(r.stdout), &ms); r.code != 0 || err != nil {
		t.Fatalf("etcd members: exit code %d, %v\n%s", r.code, err, r.out)
	}
	leaders, leader := 0, ""
	for _, m := range ms {
		if !m.Healthy || m.Version == "" || m.DBSize == 0 || len(m.Alarms) != 0 {
			t.Errorf("member %s: healthy %t, version %q, db size %d, alarms %v", m.Name, m.Healthy, m.Version, m.DBSize, m.Alarms)
		}
		if m.Leader {
			leaders++
			leader = m.Name
		}
	}
	if len(ms) != controlPlanes || leaders != 1 {
		t.Errorf("%d members with %d leaders; want %d members and one leader", len(ms), leaders, controlPlanes)
	}

	ctx := context.Background()
	if _, err := h.kube("e2e").CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "written-before-the-snapshot"}, Data: map[string]string{"k": "v"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(h.dir, "etcd.db")
	if r := h.slipway(nil, "etcd", "snapshot", "-m", manifest, "--file", file); r.code != 0 {
		t.Fatalf("etcd snapshot: exit code %d\n%s", r.code, r.out)
	}
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("the snapshot has mode %o; it holds every Secret, want 0600", fi.Mode().Perm())
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := etcd.VerifySnapshot(bytes.NewReader(data)); err != nil {
		t.Error(err)
	}
	// The backend database holds keys as they are: the ConfigMap must be in it.
	if !bytes.Contains(data, []byte("/registry/configmaps/default/written-before-the-snapshot")) {
		t.Error("the snapshot does not hold a ConfigMap written before it was taken")
	}
	check := exec.Command("sha256sum", "-c", filepath.Base(file)+".sha256")
	check.Dir = h.dir
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("sha256sum -c: %v\n%s", err, out)
	}
	if r := h.slipway(nil, "etcd", "snapshot", "-m", manifest, "--file", file); r.code != 1 || !strings.Contains(r.out, "does not overwrite") {
		t.Errorf("a second snapshot to the same file: exit code %d; want 1 and a refusal\n%s", r.code, r.out)
	}
	if after, _ := os.ReadFile(file); !bytes.Equal(after, data) {
		t.Error("the refused snapshot changed the file")
	}

	h.checkDefragment(t, manifest, controlPlanes, leader)
	h.checkDisarm(t, manifest, leader)
	h.checkBackup(t, manifest)
}

// checkDisarm disarms where no alarm is active: nothing to do, for all members and for one, and
// an unknown member is a usage error naming the members. That an alarm is disarmed is
// pkg/etcd's TestAlarmNoSpace: filling a cluster's etcd to its 2 GiB quota takes too long here.
func (h *harness) checkDisarm(t *testing.T, manifest, leader string) {
	r := h.slipway(nil, "etcd", "disarm", "-m", manifest, "--all", "-o", "json")
	var ds []cluster.Disarmed
	if err := json.Unmarshal([]byte(r.stdout), &ds); r.code != 0 || err != nil || ds == nil || len(ds) != 0 {
		t.Errorf("etcd disarm --all: exit code %d, %v, %+v; want 0 and []\n%s", r.code, err, ds, r.out)
	}
	if r := h.slipway(nil, "etcd", "disarm", "-m", manifest, leader); r.code != 0 || !strings.Contains(r.stdout, "no active alarms on etcd member "+leader) {
		t.Errorf("etcd disarm %s: exit code %d; want 0 and no active alarms\n%s", leader, r.code, r.out)
	}
	if r := h.slipway(nil, "etcd", "disarm", "-m", manifest, "no-such-member"); r.code != 2 || !strings.Contains(r.out, `no such etcd member "no-such-member"`) || !strings.Contains(r.out, leader) {
		t.Errorf("etcd disarm of an unknown member: exit code %d; want 2 and the members named\n%s", r.code, r.out)
	}
}

// checkBackup takes a backup into a new directory: the CAs and keys of cp-1 and an etcd
// snapshot that passes its own check, every file 0600 in a 0700 directory.
func (h *harness) checkBackup(t *testing.T, manifest string) {
	dir := filepath.Join(h.dir, "backups")
	r := h.slipway(nil, "backup", "-m", manifest, dir, "-o", "json")
	var b cluster.Backup
	if err := json.Unmarshal([]byte(r.stdout), &b); r.code != 0 || err != nil || b.Snapshot == nil {
		t.Fatalf("backup: exit code %d, %v\n%s", r.code, err, r.out)
	}
	for f, want := range map[string]os.FileMode{dir: 0o700, b.PKI: 0o600, b.Snapshot.Path: 0o600, b.Snapshot.Path + ".sha256": 0o600} {
		if fi, err := os.Stat(f); err != nil {
			t.Error(err)
		} else if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %o; want %o", f, fi.Mode().Perm(), want)
		}
	}
	data, err := os.ReadFile(b.Snapshot.Path)
	if err != nil {
		t.Fatal(err)
	}
	if err := etcd.VerifySnapshot(bytes.NewReader(data)); err != nil {
		t.Error(err)
	}
	key, err := exec.Command("tar", "-xzOf", b.PKI, "pki/ca.key").Output()
	if err != nil {
		t.Fatal(err)
	}
	if onHost, err := h.onHost("cp-1", "cat /etc/kubernetes/pki/ca.key"); err != nil || string(key) != onHost {
		t.Errorf("the backup's ca.key is not cp-1's (%v)", err)
	}
}

// checkDefragment defragments every member and checks the order (the leader, as etcd members
// named it just before, last), the progress on standard error, and that every member answers
// afterwards. That the space comes back is pkg/etcd's TestDefragment: the API server compacts
// only every five minutes, so here little space is free.
func (h *harness) checkDefragment(t *testing.T, manifest string, controlPlanes int, leader string) {
	r := h.slipway(nil, "etcd", "defragment", "-m", manifest, "-o", "json")
	var ds []cluster.Defragmented
	if err := json.Unmarshal([]byte(r.stdout), &ds); r.code != 0 || err != nil {
		t.Fatalf("etcd defragment: exit code %d, %v\n%s", r.code, err, r.out)
	}
	if len(ds) != controlPlanes {
		t.Fatalf("%d members defragmented; want %d", len(ds), controlPlanes)
	}
	for i, d := range ds {
		if d.Before <= 0 || d.After <= 0 || d.Leader != (i == len(ds)-1) {
			t.Errorf("member %d of %d: %+v; want both sizes, and the leader last", i+1, len(ds), d)
		}
		if !strings.Contains(r.out, "defragmented etcd member "+d.Name+":") {
			t.Errorf("no progress line for member %s", d.Name)
		}
	}
	if last := ds[len(ds)-1].Name; last != leader {
		t.Errorf("the last member defragmented is %s; etcd members named %s the leader", last, leader)
	}
	r = h.slipway(nil, "etcd", "members", "-m", manifest, "-o", "json")
	var ms []etcd.Member
	if err := json.Unmarshal([]byte(r.stdout), &ms); r.code != 0 || err != nil {
		t.Fatalf("etcd members after the defragmentation: exit code %d, %v\n%s", r.code, err, r.out)
	}
	for _, m := range ms {
		if !m.Healthy {
			t.Errorf("member %s is not healthy after the defragmentation", m.Name)
		}
	}
}
