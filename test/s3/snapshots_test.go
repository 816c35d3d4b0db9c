package s3_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/scripts"
	"github.com/slipway-dev/slipway/test/s3/s3test"
)

// TestSnapshotUploads runs the script of the scheduled etcd snapshots, as slipway renders it for
// a control plane with etcd.snapshots.s3, against a real S3-compatible store (versitygw over
// https, its CA given as caFile), with the host's own bash and curl (see runSnapshot). Each run
// must upload the snapshot and its checksum under the folder, and keep the newest two there as
// on the host; a run whose upload is refused must fail, saying so, and keep the snapshot on the
// host.
//
// The bucket also holds what others put there (see plant): keys that are not this node's
// snapshot names must neither count nor be deleted, keys under its names must not have the
// snapshots it keeps deleted, and more keys than one listing page holds must not hide the
// node's own.
func TestSnapshotUploads(t *testing.T) {
	if testing.Short() {
		t.Skip("runs versitygw, an S3-compatible server; skipped under -short")
	}
	srv := s3test.StartTLS(t, "127.0.0.1")
	srv.CreateBucket(t, "backups")
	planted := plant(t, srv, "backups")
	s3 := &v1beta1.SnapshotS3{Endpoint: srv.Endpoint, Bucket: "backups", Folder: "prod/etcd/", Region: s3test.Region, CAFile: srv.CAFile}
	dir := t.TempDir()
	run := func(t *testing.T, secret string) (string, error) {
		t.Helper()
		return runSnapshot(t, dir, srv, s3, secret)
	}
	local := func(t *testing.T) []string {
		t.Helper()
		entries, err := os.ReadDir(filepath.Join(dir, "snapshots"))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, "prod/etcd/"+e.Name())
		}
		slices.Sort(names)
		return names
	}

	for i := 1; i <= 3; i++ {
		out, err := run(t, srv.SecretAccessKey)
		if err != nil {
			t.Fatalf("run %d: %v\n%s", i, err, out)
		}
		if !strings.Contains(out, "uploaded the snapshot to "+srv.Endpoint+"/backups/prod/etcd/cp-1-") {
			t.Errorf("run %d does not report its upload:\n%s", i, out)
		}
		if i == 3 && !strings.Contains(out, "removed the old snapshot "+srv.Endpoint+"/backups/prod/etcd/cp-1-") {
			t.Errorf("run 3 does not report the pruning of the bucket:\n%s", out)
		}
		remote, here := withoutPlanted(srv.Objects(t, "backups", ""), planted), local(t)
		if want := min(i, 2) * 2; len(here) != want || !slices.Equal(remote, here) {
			t.Fatalf("after run %d the bucket holds %v and the host %v; want the same %d files", i, remote, here, want)
		}
		if kept := srv.Objects(t, "backups", ""); len(kept) != len(here)+len(planted) {
			var gone []string
			for key := range planted {
				if !slices.Contains(kept, key) {
					gone = append(gone, key)
				}
			}
			slices.Sort(gone)
			t.Fatalf("after run %d, of the keys others put in the bucket these are gone: %.600q", i, gone)
		}
	}
	for _, key := range withoutPlanted(srv.Objects(t, "backups", ""), planted) {
		if !strings.HasSuffix(key, ".db") {
			continue
		}
		uploaded, err := os.ReadFile(srv.Path("backups", key))
		if err != nil {
			t.Fatal(err)
		}
		onHost, err := os.ReadFile(filepath.Join(dir, "snapshots", filepath.Base(key)))
		if err != nil {
			t.Fatal(err)
		}
		sum, err := os.ReadFile(srv.Path("backups", key+".sha256"))
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(uploaded)
		if want := fmt.Sprintf("%s  %s\n", hex.EncodeToString(h[:]), filepath.Base(key)); string(uploaded) != string(onHost) || string(sum) != want {
			t.Errorf("%s in the bucket differs from the host's copy, or its checksum file reads %q (want %q)", key, sum, want)
		}
	}

	// A wrong secret: the store refuses the upload, the run fails and says what, and the new
	// snapshot stays on the host (the oldest is pruned there as always).
	before := local(t)
	out, err := run(t, "not"+srv.SecretAccessKey)
	if err == nil || !strings.Contains(out, "uploading "+filepath.Join(dir, "snapshots")+"/cp-1-") || !strings.Contains(out, "403") {
		t.Errorf("a run with a wrong secret: %v; want a failure naming the upload and the store's 403\n%s", err, out)
	}
	after := local(t)
	if len(after) != 4 || slices.Equal(after, before) {
		t.Errorf("the host's snapshots after a failed upload: %v (before %v); want the new one kept", after, before)
	}
}

// TestSnapshotUploadsInsecure: with insecure: true, the same script uploads to an http://
// endpoint (versitygw without TLS), which curl's --proto allows only then.
func TestSnapshotUploadsInsecure(t *testing.T) {
	if testing.Short() {
		t.Skip("runs versitygw, an S3-compatible server; skipped under -short")
	}
	srv := s3test.Start(t, "127.0.0.1")
	srv.CreateBucket(t, "backups")
	s3 := &v1beta1.SnapshotS3{Endpoint: srv.Endpoint, Bucket: "backups", Region: s3test.Region, Insecure: true}
	if out, err := runSnapshot(t, t.TempDir(), srv, s3, srv.SecretAccessKey); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if keys := srv.Objects(t, "backups", ""); len(keys) != 2 {
		t.Errorf("the bucket holds %v; want the snapshot and its checksum", keys)
	}
}

// runSnapshot renders the set-up of snapshots of node cp-1, the newest two kept, uploaded to s3
// on srv with secret, and runs its snapshot script with the host's bash and curl, the host's
// paths moved under dir. Only etcd is played: ctr, which runs etcdctl from the etcd image on a
// control plane, is a shell function here that writes random bytes where etcdctl would write the
// snapshot. It returns what the script printed.
func runSnapshot(t *testing.T, dir string, srv *s3test.Server, s3 *v1beta1.SnapshotS3, secret string) (string, error) {
	t.Helper()
	install, err := scripts.EtcdSnapshots(&scripts.SnapshotParams{Node: "cp-1", Image: "registry.k8s.io/etcd:3.6.6-0",
		Snapshots: v1beta1.EtcdSnapshots{Schedule: "@hourly", Retain: 2, S3: s3},
		S3:        &scripts.S3Credentials{AccessKeyID: srv.AccessKeyID, SecretAccessKey: secret, CA: srv.CA}})
	if err != nil {
		t.Fatal(err)
	}
	script := between(t, install, "<<'SLIPWAY_SNAPSHOT_SCRIPT'\n", "SLIPWAY_SNAPSHOT_SCRIPT\n")
	curlrc := strings.ReplaceAll(between(t, install, "<<'SLIPWAY_S3_CONFIG'\n", "SLIPWAY_S3_CONFIG\n"), scripts.SnapshotS3CA, srv.CAFile)
	if strings.Contains(script, secret) {
		t.Error("the snapshot script holds the secret key; only the curl configuration may")
	}
	rc := filepath.Join(dir, "curlrc")
	if err := os.WriteFile(rc, []byte(curlrc), 0o600); err != nil {
		t.Fatal(err)
	}
	script = strings.NewReplacer(scripts.SnapshotDir, filepath.Join(dir, "snapshots"), scripts.SnapshotS3Config, rc).Replace(script)
	script = strings.Replace(script, "set -euo pipefail\n", "set -euo pipefail\n"+
		`ctr() { case " $* " in *" snapshot save "*) head -c 4096 /dev/urandom >"${@: -1}" ;; esac; }`+"\n", 1)
	out, err := exec.Command("bash", "-c", script).CombinedOutput()
	return string(out), err
}

// plant puts into bucket what others might have put there, all of which a node's retention must
// leave alone, and returns those keys. Some of them are in the listing of cp-1's prefix, before
// and after its real snapshots (prod/etcd/cp-1-20…): another node's snapshots, names curl would
// glob, near misses, 1001 small objects (more than one listing page) and two keys under cp-1's
// own names dated 9999, newer than every real one.
func plant(t *testing.T, srv *s3test.Server, bucket string) map[string]bool {
	t.Helper()
	keys := map[string]bool{}
	for _, key := range []string{
		"prod/etcd/cp-1-b-20200101T000000.000Z.db", // node cp-1-b's, whose name starts with cp-1-
		"prod/etcd/cp-1-b-20200101T000000.000Z.db.sha256",
		"prod/etcd/cp-1-0{a,b}.db", "prod/etcd/cp-1-0a.db", "prod/etcd/cp-1-0b.db", // {a,b} if curl globbed
		"prod/etcd/cp-1-0[a-b].db",
		"prod/etcd/cp-1-20200101T000000.000Z.db.bak", "prod/etcd/cp-1-20200101T000000.000Z.db.sha256.x",
		"prod/etcd/cp-1-20200101T000000Z.db", "prod/etcd/cp-1-2020-01-01.db", "prod/etcd/old/cp-1-20200101T000000.000Z.db",
		"prod/cp-1-20200101T000000.000Z.db", "cp-1-20200101T000000.000Z.db",
		"prod/etcd/cp-1-99991231T235959.998Z.db", "prod/etcd/cp-1-99991231T235959.999Z.db", // cp-1's names
	} {
		srv.Put(t, bucket, key, []byte("planted "+key+"\n"))
		keys[key] = true
	}
	// More than one page, written to the served directory directly (versitygw lists it); they
	// sort before cp-1's real snapshots, so that a listing of one page would hold none of those.
	if err := os.MkdirAll(srv.Path(bucket, "prod/etcd"), 0o700); err != nil {
		t.Fatal(err)
	}
	for i := range 1001 {
		key := fmt.Sprintf("prod/etcd/cp-1-0-%04d.txt", i)
		if err := os.WriteFile(srv.Path(bucket, key), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		keys[key] = true
	}
	if got := srv.Objects(t, bucket, ""); len(got) != len(keys) {
		t.Fatalf("the bucket holds %d keys after planting %d", len(got), len(keys))
	}
	return keys
}

// withoutPlanted is keys less those plant put there.
func withoutPlanted(keys []string, planted map[string]bool) []string {
	return slices.DeleteFunc(keys, func(k string) bool { return planted[k] })
}

// between returns the text of s after start, up to end.
func between(t *testing.T, s, start, end string) string {
	t.Helper()
	_, rest, ok := strings.Cut(s, start)
	if !ok {
		t.Fatalf("the script lacks %q", start)
	}
	body, _, ok := strings.Cut(rest, end)
	if !ok {
		t.Fatalf("the script lacks %q", end)
	}
	return body
}
