package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/scripts"
)

// TestCheckUploads: with assets.upload, apply refuses before any change when the directory
// lacks a binary a host needs or containerd's release for a host whose containerd is too old,
// naming each file and its hosts; a host at the version with containerd 2 needs nothing.
func TestCheckUploads(t *testing.T) {
	dir := t.TempDir()
	c := &v1beta1.Cluster{Versions: v1beta1.Versions{Kubernetes: "v1.36.3"}, Assets: v1beta1.Assets{Upload: &v1beta1.UploadAssets{Directory: dir}}}
	debian := scripts.OS{ID: "debian", VersionID: "12"}
	facts := map[string]scripts.Facts{
		"cp-1":     {OS: debian, Arch: "x86_64", ContainerdVersion: "1.6.20~ds1"},
		"worker-1": {OS: debian, Arch: "x86_64"},
		"done":     {OS: debian, Arch: "x86_64", ContainerdVersion: "v2.2.9", KubeadmVersion: "v1.36.3", KubeletVersion: "v1.36.3", KubectlVersion: "v1.36.3"},
	}
	err := checkUploads(c, facts)
	tarball := scripts.ContainerdTarball("2.2.9", "amd64")
	for _, want := range []string{"assets.upload.directory " + dir, "kubeadm is missing (needed by cp-1, worker-1)", tarball + " is missing (needed by cp-1, worker-1)", "nothing was changed"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), "done") {
		t.Errorf("error %v names the host that needs nothing", err)
	}

	for _, f := range []string{"kubeadm", "kubelet", "kubectl", tarball} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := checkUploads(c, facts); err != nil {
		t.Errorf("with every file present: %v", err)
	}

	// A directory in place of a file is named as such.
	if err := os.Remove(filepath.Join(dir, "kubectl")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "kubectl"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := checkUploads(c, facts); err == nil || !strings.Contains(err.Error(), "kubectl is not a regular file") {
		t.Errorf("kubectl as a directory: %v", err)
	}

	// Hosts already at the version and on containerd 2 need no file at all; other sources are
	// not checked.
	if err := checkUploads(c, map[string]scripts.Facts{"done": facts["done"]}); err != nil {
		t.Errorf("converged host: %v", err)
	}
	c.Assets = v1beta1.Assets{Packages: &v1beta1.PackageAssets{}}
	if err := checkUploads(c, facts); err != nil {
		t.Errorf("packages: %v", err)
	}
}
