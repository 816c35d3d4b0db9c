package phases

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/applied"
	"github.com/slipway-dev/slipway/pkg/images"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/scripts"
	"github.com/slipway-dev/slipway/pkg/ssh/sshtest"
	"github.com/slipway-dev/slipway/test/envtest"
)

// importRun is one control plane, a fake over SSH, with the real API of envtest.
type importRun struct {
	c    *v1beta1.Cluster
	host *sshtest.Host
	kc   *kube.Client
	log  bytes.Buffer
}

func (r *importRun) Node(name string) (Node, error) {
	return Node{Node: &inventory.Node{Name: name}, SSH: r.host}, nil
}
func (r *importRun) Manifest() *v1beta1.Cluster                 { return r.c }
func (r *importRun) Kube(context.Context) (*kube.Client, error) { return r.kc, nil }
func (r *importRun) Logf(host, format string, args ...any) {
	fmt.Fprintf(&r.log, host+": "+format+"\n", args...)
}

// testArchive writes an image archive, as make image does, of a machine-controller at version
// and the CCM, both from a stand-in binary.
func testArchive(t *testing.T, version string) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.WriteFile(bin, []byte("binary "+version), 0o755); err != nil {
		t.Fatal(err)
	}
	built, err := images.Assemble([]images.Spec{images.MachineController(bin, version, "abc"), images.CloudControllerManager(bin)}, images.Options{Created: time.Unix(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "slipway-images-"+version+".tar")
	if err := images.WriteArchive(p, built, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestImportImages: a control plane whose containerd lacks the images gets the archive uploaded
// (0600, root) and imported; one that holds them gets no upload; both run the import script
// (which pins the images) and have the archive's hash recorded in the cluster for the plan.
func TestImportImages(t *testing.T) {
	env := envtest.Get(t)
	kc, err := kube.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	archive := testArchive(t, "v9.9.9")
	refs, err := images.Refs(archive)
	if err != nil {
		t.Fatal(err)
	}
	c := &v1beta1.Cluster{Name: "unit", MachineController: v1beta1.MachineController{ImageArchive: archive}, CloudProvider: v1beta1.CloudProvider{OpenStack: &v1beta1.OpenStackCloud{}}}
	v1beta1.SetDefaults(c, "v9.9.9")
	hash, err := ImageArchiveHash(c)
	if err != nil || hash == "" {
		t.Fatalf("ImageArchiveHash = %q, %v", hash, err)
	}
	wantScript, err := scripts.ImportImages(uploadedArchive, refs)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, host, listed string
		upload             bool
	}{
		{name: "images missing", host: "cp-import-1", listed: "registry.k8s.io/pause:3.10.1\n", upload: true},
		{name: "one image missing", host: "cp-import-2", listed: refs[1] + "\n", upload: true},
		{name: "images present", host: "cp-import-3", listed: strings.Join(refs, "\n") + "\nregistry.k8s.io/pause:3.10.1\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := sshtest.NewHost(tt.host).On(`^ctr -n k8s.io images ls -q$`, sshtest.Response{Stdout: tt.listed})
			r := &importRun{c: c, host: h, kc: kc}
			if err := importImages(context.Background(), r, tt.host); err != nil {
				t.Fatal(err)
			}
			var want []string
			want = append(want, "ctr -n k8s.io images ls -q")
			if tt.upload {
				// The directory first: SFTP needs it, and a fresh host has none.
				want = append(want, "mkdir -p -m 0700 "+scripts.ImageArchiveDir, "upload "+uploadedArchive)
			}
			want = append(want, "script import-images")
			if got := h.Commands(); strings.Join(got, "; ") != strings.Join(want, "; ") {
				t.Errorf("commands %q, want %q", got, want)
			}
			if f, ok := h.File(uploadedArchive); ok != tt.upload {
				t.Errorf("uploaded: %v, want %v", ok, tt.upload)
			} else if ok {
				data, _ := os.ReadFile(archive)
				if !bytes.Equal(f.Data, data) || f.Mode != 0o600 || f.Owner != "root" {
					t.Errorf("uploaded %d bytes mode %o owner %q; want the archive, 0600, root", len(f.Data), f.Mode, f.Owner)
				}
			}
			if calls := h.Calls(); calls[len(calls)-1].Script != wantScript {
				t.Error("the import script is not ImportImages of the archive's references")
			}
			recorded, err := applied.Addons(context.Background(), kc)
			if err != nil || recorded[plan.ImageArchiveRecord(tt.host)] != hash {
				t.Errorf("record %q = %q (%v), want %q", plan.ImageArchiveRecord(tt.host), recorded[plan.ImageArchiveRecord(tt.host)], err, hash)
			}
		})
	}
}

func TestImageArchiveHash(t *testing.T) {
	archive := testArchive(t, "v9.9.9")
	notArchive := filepath.Join(t.TempDir(), "x.tar")
	os.WriteFile(notArchive, []byte("not a tar"), 0o644)
	deploy, none := true, false
	tests := []struct {
		name     string
		mc       v1beta1.MachineController
		reg      *v1beta1.RegistryConfiguration
		external bool
		want     string // error substring; "" for success
	}{
		{name: "no archive", mc: v1beta1.MachineController{}},
		{name: "the default image", mc: v1beta1.MachineController{ImageArchive: archive}},
		{name: "another version", mc: v1beta1.MachineController{ImageArchive: archive, Image: "ghcr.io/slipway-dev/machine-controller:v1.0.0"},
			want: "not the machine-controller image ghcr.io/slipway-dev/machine-controller:v1.0.0"},
		{name: "the default under overwriteRegistry", mc: v1beta1.MachineController{ImageArchive: archive},
			reg: &v1beta1.RegistryConfiguration{OverwriteRegistry: "registry.example.com"}, want: "registry.example.com/slipway-dev/machine-controller:v9.9.9"},
		{name: "the CCM only, without the machine-controller", mc: v1beta1.MachineController{ImageArchive: archive, Deploy: &none, Image: "x.io/mc:v1"}},
		{name: "with the cloud-controller-manager", mc: v1beta1.MachineController{ImageArchive: archive}, external: true},
		{name: "the cloud-controller-manager under overwriteRegistry", mc: v1beta1.MachineController{ImageArchive: archive, Deploy: &none},
			reg: &v1beta1.RegistryConfiguration{OverwriteRegistry: "registry.example.com"}, external: true,
			want: "not the cloud-controller-manager image registry.example.com/provider-os/openstack-cloud-controller-manager:v1.34.1"},
		{name: "deployed explicitly", mc: v1beta1.MachineController{ImageArchive: archive, Deploy: &deploy}},
		{name: "missing file", mc: v1beta1.MachineController{ImageArchive: archive + ".gone"}, want: "no such file"},
		{name: "not an archive", mc: v1beta1.MachineController{ImageArchive: notArchive}, want: "machineController.imageArchive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &v1beta1.Cluster{Name: "unit", MachineController: tt.mc, RegistryConfiguration: tt.reg, CloudProvider: v1beta1.CloudProvider{OpenStack: &v1beta1.OpenStackCloud{}, External: tt.external}}
			v1beta1.SetDefaults(c, "v9.9.9")
			hash, err := ImageArchiveHash(c)
			switch {
			case tt.want == "" && err != nil:
				t.Fatal(err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			case tt.want == "" && (hash == "") != (tt.mc.ImageArchive == ""):
				t.Errorf("hash %q for archive %q", hash, tt.mc.ImageArchive)
			}
		})
	}
}
