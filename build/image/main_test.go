package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/images"
)

// skipOrFail skips an integration test that cannot run here, except under CI=true, where
// nothing may skip.
func skipOrFail(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
}

func repo(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// copyTree copies the files git knows of (tracked, and untracked but not ignored) from root to
// dst: the same source at another path, as a second checkout would have it.
func copyTree(t *testing.T, root, dst string) {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		data, err := os.ReadFile(filepath.Join(root, name))
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dst, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReproducibleFromAnotherCheckout builds the machine-controller image from this checkout and
// from a copy of it at another path, with other file times, and wants one digest: no path, time
// or VCS detail of the machine reaches the binary or the image.
func TestReproducibleFromAnotherCheckout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the machine-controller twice (-short)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	root := repo(t)
	other := filepath.Join(t.TempDir(), "elsewhere", "slipway")
	copyTree(t, root, other)
	var digests []string
	for _, dir := range []string{root, other} {
		bin := filepath.Join(t.TempDir(), "machine-controller")
		if err := images.GoBuild(ctx, dir, "v0.0.0-repro", bin, os.Stderr); err != nil {
			t.Fatal(err)
		}
		built, err := images.Assemble([]images.Spec{images.MachineController(bin, "v0.0.0-repro", "0000")}, images.Options{Created: time.Unix(0, 0)})
		if err != nil {
			t.Fatal(err)
		}
		d, err := built[0].Image.Digest()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(bin)
		if bytes.Contains(data, []byte(dir)) {
			t.Errorf("the binary built in %s contains that path", dir)
		}
		digests = append(digests, d.String())
	}
	if digests[0] != digests[1] {
		t.Fatalf("the image built from %s is %s, from %s %s", root, digests[0], other, digests[1])
	}
	t.Logf("both builds: %s", digests[0])
}

// TestImagesRun runs what `make image` builds in Docker: docker load takes the archive, the
// machine-controller starts as user 65532 and reports the version it was built with, and the
// cloud-controller-manager reports its release.
func TestImagesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds both images and runs them in Docker (-short)")
	}
	if err := exec.Command("docker", "info").Run(); err != nil {
		skipOrFail(t, "no Docker daemon answers: "+err.Error())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	suffix := make([]byte, 4)
	rand.Read(suffix)
	version := "v0.0.0-test-" + hex.EncodeToString(suffix)
	out := t.TempDir()
	if err := build(ctx, repo(t), out, version, "0000", true, images.Options{Created: time.Unix(0, 0)}); err != nil {
		t.Fatal(err)
	}
	mc := "ghcr.io/slipway-dev/machine-controller:" + version
	t.Cleanup(func() { exec.Command("docker", "rmi", mc).Run() })
	docker(t, "load", "-i", filepath.Join(out, "slipway-images-"+version+".tar"))

	if got := docker(t, "image", "inspect", "--format", "{{.Config.User}}", mc); got != "65532:65532" {
		t.Errorf("machine-controller user %q", got)
	}
	if got := docker(t, "run", "--rm", "--user", "65532", "--read-only", "--cap-drop", "ALL", mc, "--version"); got != "machine-controller "+version {
		t.Errorf("machine-controller --version: %q", got)
	}
	if got := docker(t, "run", "--rm", "--user", "65532", mc, "--help"); !strings.Contains(got, "-webhook-port") {
		t.Errorf("machine-controller --help: %q", got)
	}
	ccm := "registry.k8s.io/provider-os/openstack-cloud-controller-manager:" + images.CCMVersion()
	// Upstream's manifests name the binary in args, which replace the image's Cmd.
	if got := docker(t, "run", "--rm", ccm, "/bin/openstack-cloud-controller-manager", "--version"); got != "Kubernetes "+images.CCMVersion() {
		t.Errorf("cloud-controller-manager --version: %q", got)
	}
}

func docker(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("docker", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}
