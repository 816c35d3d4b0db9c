package scripts_test

import (
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/images"
	"github.com/slipway-dev/slipway/pkg/scripts"
)

// TestImportImagesOnSandboxHost loads what `make image` builds (the machine-controller of this
// checkout and the OpenStack cloud-controller-manager) into a real host's containerd 1.6 with
// the import script, as apply does for machineController.imageArchive: the images land in the
// k8s.io namespace, pinned, the archive is removed, a second run changes nothing, and both
// images run from there, as the user their configuration names (65532; ctr 1.6 has no --user).
func TestImportImagesOnSandboxHost(t *testing.T) {
	x := sandboxHost(t, "images", "172.30.238.0/24")
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	const version = "v0.0.0-import-test"
	dir := t.TempDir()
	mc := filepath.Join(dir, "machine-controller")
	if err := images.GoBuild(x.ctx, root, version, mc, io.Discard); err != nil {
		t.Fatal(err)
	}
	ccm, err := images.BuildCCM(x.ctx, root, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	built, err := images.Assemble([]images.Spec{images.MachineController(mc, version, "0000"), images.CloudControllerManager(ccm)}, images.Options{Created: time.Unix(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, "slipway-images.tar")
	if err := images.WriteArchive(archive, built, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	refs, err := images.Refs(archive)
	if err != nil {
		t.Fatal(err)
	}
	onHost := scripts.ImageArchiveDir + "/slipway-images.tar"
	x.shell("mkdir -p " + scripts.ImageArchiveDir)
	if out, err := exec.CommandContext(x.ctx, "docker", "cp", archive, x.h.Container+":"+onHost).CombinedOutput(); err != nil {
		t.Fatalf("docker cp: %v: %s", err, out)
	}
	script, err := scripts.ImportImages(onHost, refs)
	if err != nil {
		t.Fatal(err)
	}

	changes := x.run("import-images", script)
	for _, want := range []string{"imported " + strings.Join(refs, " "), "pinned " + refs[0], "pinned " + refs[1], "removed " + onHost} {
		if !contains(changes, want) {
			t.Errorf("import-images did not report %q", want)
		}
	}
	x.wantNoChanges("import-images", script)
	for _, ref := range refs {
		if got := x.shell("ctr -n k8s.io images ls -q 'name==" + ref + `,labels."io.cri-containerd.pinned"==pinned'`); got != ref {
			t.Errorf("%s is not in containerd's k8s.io namespace, pinned: %q", ref, got)
		}
	}
	// The shim writes the output to a file: ctr run's own copy of a process that exits at once
	// can lose it (seen with containerd 1.6).
	run := func(ref, id string, args ...string) string {
		return x.shell("ctr -n k8s.io run --rm --log-uri file:///tmp/" + id + ".log " + ref + " " + id + " " + strings.Join(args, " ") + " && cat /tmp/" + id + ".log")
	}
	if got := run(refs[0], "mc-version", "/machine-controller", "--version"); got != "machine-controller "+version {
		t.Errorf("the machine-controller from containerd says %q", got)
	}
	if got := run(refs[1], "ccm-version", "/bin/openstack-cloud-controller-manager", "--version"); got != "Kubernetes "+images.CCMVersion() {
		t.Errorf("the cloud-controller-manager from containerd says %q", got)
	}

	// An image gone (removed by hand) and no archive uploaded: the script says what is missing.
	x.shell("ctr -n k8s.io images rm " + refs[0] + " >/dev/null")
	if out, err := x.sb.RunScript(x.ctx, x.h, script); err == nil || !strings.Contains(out+err.Error(), "upload the image archive first") {
		t.Errorf("import without the archive: %v: %s", err, out)
	}
}
