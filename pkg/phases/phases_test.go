package phases

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/access"
	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/applied"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/scripts"
	"github.com/slipway-dev/slipway/pkg/ssh/sshtest"
)

// TestHostPhasesOnEightHosts runs the registered prerequisites and install-kubernetes phases
// through the Runner on eight fake hosts, three at a time: each host gets its own rendered
// script and the record of its hash, then the install script for its OS, and the progress
// lines of parallel hosts stay whole.
func TestHostPhasesOnEightHosts(t *testing.T) {
	c := &v1beta1.Cluster{APIVersion: v1beta1.APIVersion, Kind: v1beta1.Kind, Name: "unit", Versions: v1beta1.Versions{Kubernetes: "v1.36.3"}}
	for i := range 8 {
		h := v1beta1.Host{PublicAddress: fmt.Sprintf("10.0.0.%d", i+1), Hostname: fmt.Sprintf("h%d", i+1), SSHPrivateKeyFile: "/k"}
		if i == 0 {
			c.ControlPlane.Hosts = append(c.ControlPlane.Hosts, h)
		} else {
			c.StaticWorkers.Hosts = append(c.StaticWorkers.Hosts, h)
		}
	}
	v1beta1.SetDefaults(c, "test")
	nodes := inventory.Nodes(c)
	fleet := &sshtest.Fleet{}
	facts := map[string]scripts.Facts{}
	rendered := Rendered{PrereqScripts: map[string]string{}, PrereqRecords: map[string]string{}}
	p := &plan.Plan{}
	for i, n := range nodes {
		os := scripts.OS{ID: "debian", VersionID: "12"}
		if i%2 == 1 {
			os = scripts.OS{ID: "ubuntu", VersionID: "24.04"}
		}
		facts[n.Name] = scripts.Facts{OS: os, Arch: "x86_64", Hostname: n.Name, SudoOK: true}
		rendered.PrereqScripts[n.Name] = "echo prerequisites of " + n.Name + "\n"
		record, err := applied.HostRecord("", []byte(rendered.PrereqScripts[n.Name]))
		if err != nil {
			t.Fatal(err)
		}
		rendered.PrereqRecords[n.Name] = record
		p.Steps = append(p.Steps, plan.Step{Name: plan.StepPrerequisites, Host: n.Name, Parallel: true})
	}
	for _, n := range nodes {
		p.Steps = append(p.Steps, plan.Step{Name: plan.StepInstall, Host: n.Name, Parallel: true})
	}
	var log bytes.Buffer
	r := NewRun(Config{Manifest: c, Nodes: nodes, Facts: facts, SSH: fleet, API: access.New(nodes, fleet, c.APIEndpoint), Rendered: rendered, Log: &log})
	if err := (&Runner{Parallel: 3}).Run(context.Background(), r, p); err != nil {
		t.Fatal(err)
	}

	for _, n := range nodes {
		h := fleet.Get(n.Target.String())
		calls := h.Calls()
		if len(calls) != 3 || calls[0].Command != "script prerequisites" || calls[1].Command != "upload "+applied.PrereqHashFile || calls[2].Command != "script install-kubernetes" {
			t.Errorf("%s received %q", n.Name, h.Commands())
			continue
		}
		if calls[0].Script != rendered.PrereqScripts[n.Name] {
			t.Errorf("%s ran the prerequisites script %q, not its own", n.Name, calls[0].Script)
		}
		if f, _ := h.File(applied.PrereqHashFile); string(f.Data) != rendered.PrereqRecords[n.Name]+"\n" || f.Owner != "root" || f.Mode != 0o600 {
			t.Errorf("%s: prerequisites record %q owned by %q, mode %o", n.Name, f.Data, f.Owner, f.Mode)
		}
		want, err := scripts.InstallKubernetes(facts[n.Name].OS, scripts.InstallParams{Cluster: c, Arch: "amd64"})
		if err != nil {
			t.Fatal(err)
		}
		if calls[2].Script != want {
			t.Errorf("%s: the install script is not the one for %s", n.Name, facts[n.Name].OS.ID)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		if !strings.HasSuffix(line, " started") && !strings.Contains(line, " done in ") && !strings.HasPrefix(line, "Done: 16 steps") {
			t.Errorf("progress line mangled: %q", line)
		}
	}
}

func TestPrerequisitesWithoutARenderedScript(t *testing.T) {
	c := &v1beta1.Cluster{ControlPlane: v1beta1.ControlPlane{Hosts: []v1beta1.Host{{PublicAddress: "10.0.0.1", Hostname: "cp"}}}}
	nodes := inventory.Nodes(c)
	fleet := &sshtest.Fleet{}
	r := NewRun(Config{Manifest: c, Nodes: nodes, SSH: fleet})
	if err := prerequisites(context.Background(), r, "cp"); err == nil || !strings.Contains(err.Error(), "no prerequisites script was rendered for cp") {
		t.Fatalf("got %v", err)
	}
	if err := prerequisites(context.Background(), r, "nope"); err == nil || !strings.Contains(err.Error(), `no host named "nope"`) {
		t.Fatalf("got %v", err)
	}
	if got := fleet.Get("cp").Commands(); len(got) != 0 {
		t.Errorf("the host received %q", got)
	}
}

// TestPrerequisitesUploadContainerd: with assets.upload, a host whose containerd is too old for
// the version gets containerd's release tarball (and its checksum file) from the operator's
// directory before its prerequisites run; a host that keeps its containerd gets no upload.
func TestPrerequisitesUploadContainerd(t *testing.T) {
	dir := t.TempDir()
	tarball := scripts.ContainerdTarball("2.2.9", "amd64")
	for name, data := range map[string]string{tarball: "tarball", tarball + ".sha256sum": "abc  " + tarball + "\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c := &v1beta1.Cluster{Versions: v1beta1.Versions{Kubernetes: "v1.36.3"}, Assets: v1beta1.Assets{Upload: &v1beta1.UploadAssets{Directory: dir}},
		ControlPlane: v1beta1.ControlPlane{Hosts: []v1beta1.Host{{PublicAddress: "10.0.0.1", Hostname: "old"}, {PublicAddress: "10.0.0.2", Hostname: "new"}}}}
	nodes := inventory.Nodes(c)
	debian := scripts.OS{ID: "debian", VersionID: "12"}
	facts := map[string]scripts.Facts{
		"old": {OS: debian, Arch: "x86_64", ContainerdVersion: "1.6.20~ds1"},
		"new": {OS: debian, Arch: "x86_64", ContainerdVersion: "v2.2.9"},
	}
	rendered := Rendered{PrereqScripts: map[string]string{"old": "true\n", "new": "true\n"}, PrereqRecords: map[string]string{"old": "r", "new": "r"}}
	fleet := &sshtest.Fleet{}
	r := NewRun(Config{Manifest: c, Nodes: nodes, Facts: facts, SSH: fleet, Rendered: rendered})
	for _, host := range []string{"old", "new"} {
		if err := prerequisites(context.Background(), r, host); err != nil {
			t.Fatalf("%s: %v", host, err)
		}
	}
	dst := scripts.ContainerdUploadDir("2.2.9") + "/" + tarball
	old := fleet.Get(nodes[0].Target.String())
	// The directory first: SFTP uploads need it to exist (a real host has none at first).
	if got := strings.Join(old.Commands(), "; "); got != "mkdir -p -m 0755 "+scripts.ContainerdUploadDir("2.2.9")+"; upload "+dst+"; upload "+dst+".sha256sum; script prerequisites; upload "+applied.PrereqHashFile {
		t.Errorf("the host with containerd 1.6 received %q", got)
	}
	if f, ok := old.File(dst); !ok || string(f.Data) != "tarball" || f.Owner != "root" {
		t.Errorf("uploaded tarball: %v %+v", ok, f)
	}
	if got := strings.Join(fleet.Get(nodes[1].Target.String()).Commands(), "; "); got != "script prerequisites; upload "+applied.PrereqHashFile {
		t.Errorf("the host with containerd 2.2.9 received %q", got)
	}

	// Without the tarball, the error names the directory's field.
	if err := os.Remove(filepath.Join(dir, tarball)); err != nil {
		t.Fatal(err)
	}
	if err := prerequisites(context.Background(), r, "old"); err == nil || !strings.Contains(err.Error(), "assets.upload.directory") || !strings.Contains(err.Error(), tarball) {
		t.Errorf("missing tarball: got %v", err)
	}
}
