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
// a control plane with etcd.snapshots.s3, against a real S3-compatible store (versitygw), with
// the host's own bash and curl. Only etcd is played: ctr, which runs etcdctl from the etcd image on
// a control plane, is a shell function here that writes random bytes where etcdctl would write
// the snapshot. Each run must upload the snapshot and its checksum under the folder, and keep the
// newest two there as on the host; a run whose upload is refused must fail, saying so, and keep
// the snapshot on the host.
func TestSnapshotUploads(t *testing.T) {
	if testing.Short() {
		t.Skip("runs versitygw, an S3-compatible server; skipped under -short")
	}
	srv := s3test.Start(t, "127.0.0.1")
	srv.CreateBucket(t, "backups")
	s3 := &v1beta1.SnapshotS3{Endpoint: srv.Endpoint, Bucket: "backups", Folder: "prod/etcd/", Region: s3test.Region}
	dir := t.TempDir()
	run := func(t *testing.T, secret string) (string, error) {
		t.Helper()
		install, err := scripts.EtcdSnapshots(&scripts.SnapshotParams{Node: "cp-1", Image: "registry.k8s.io/etcd:3.6.6-0",
			Snapshots: v1beta1.EtcdSnapshots{Schedule: "@hourly", Retain: 2, S3: s3},
			S3:        &scripts.S3Credentials{AccessKeyID: srv.AccessKeyID, SecretAccessKey: secret}})
		if err != nil {
			t.Fatal(err)
		}
		script := between(t, install, "<<'SLIPWAY_SNAPSHOT_SCRIPT'\n", "SLIPWAY_SNAPSHOT_SCRIPT\n")
		curlrc := between(t, install, "<<'SLIPWAY_S3_CONFIG'\n", "SLIPWAY_S3_CONFIG\n")
		if strings.Contains(script, secret) {
			t.Error("the snapshot script holds the secret key; only the curl configuration may")
		}
		rc := filepath.Join(dir, "curlrc")
		if err := os.WriteFile(rc, []byte(curlrc), 0o600); err != nil {
			t.Fatal(err)
		}
		// The host's paths become the test's, and etcdctl's snapshot random bytes.
		script = strings.NewReplacer(scripts.SnapshotDir, filepath.Join(dir, "snapshots"), scripts.SnapshotS3Config, rc).Replace(script)
		script = strings.Replace(script, "set -euo pipefail\n", "set -euo pipefail\n"+
			`ctr() { case " $* " in *" snapshot save "*) head -c 4096 /dev/urandom >"${@: -1}" ;; esac; }`+"\n", 1)
		out, err := exec.Command("bash", "-c", script).CombinedOutput()
		return string(out), err
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
		remote, here := srv.Objects(t, "backups", ""), local(t)
		if want := min(i, 2) * 2; len(here) != want || !slices.Equal(remote, here) {
			t.Fatalf("after run %d the bucket holds %v and the host %v; want the same %d files", i, remote, here, want)
		}
	}
	for _, key := range srv.Objects(t, "backups", "") {
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
