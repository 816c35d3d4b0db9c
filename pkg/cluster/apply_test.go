package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/config"
	"github.com/slipway-dev/slipway/pkg/progress"
	"github.com/slipway-dev/slipway/pkg/ssh/sshtest"
)

// probeOutput is what the probe script prints on a bare Debian host.
func probeOutput(hostname, osID string, sudo bool) string {
	return strings.Join([]string{
		"os_id=" + osID, "os_version_id=12", "arch=x86_64", "kernel=6.1.0", "hostname=" + hostname,
		"swap_active=false", "cgroup_version=2", "sudo_ok=" + map[bool]string{true: "true", false: "false"}[sudo], "privileged=true",
		"containerd_version=", "containerd_active=false", "kubelet_active=false", "admin_conf=false",
		"kubelet_conf=false", "etcd_data=false", "resolv_loopback=false",
	}, "\n") + "\n"
}

func testCluster(t *testing.T, hosts ...string) *v1beta1.Cluster {
	t.Helper()
	c := &v1beta1.Cluster{APIVersion: v1beta1.APIVersion, Kind: v1beta1.Kind, Name: "unit", Versions: v1beta1.Versions{Kubernetes: "v1.36.3"}}
	for i, h := range hosts {
		host := v1beta1.Host{PublicAddress: h, SSHPrivateKeyFile: "/k"}
		if i == 0 {
			c.ControlPlane.Hosts = append(c.ControlPlane.Hosts, host)
		} else {
			c.StaticWorkers.Hosts = append(c.StaticWorkers.Hosts, host)
		}
	}
	v1beta1.SetDefaults(c, "test")
	if errs, _ := v1beta1.Validate(c); len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	return c
}

// fakeTarget returns a target whose hosts are fakes answering the probe with the given outputs,
// by address.
func fakeTarget(c *v1beta1.Cluster, probes map[string]string) (*Target, *sshtest.Fleet) {
	fleet := &sshtest.Fleet{}
	t := NewTarget(c, fleet)
	for _, n := range t.Nodes {
		h := fleet.Get(n.Target.String())
		h.On(`^script probe$`, sshtest.Response{Stdout: probes[n.Target.Address]})
		h.On(`^script 'acquire the apply lock'$`, sshtest.Response{Stdout: "acquired\n"})
		h.On(`^script 'release the apply lock'$`, sshtest.Response{Stdout: "released\n"})
	}
	return t, fleet
}

func TestDryRunPlansAFreshCluster(t *testing.T) {
	c := testCluster(t, "10.0.0.1", "10.0.0.2")
	target, fleet := fakeTarget(c, map[string]string{"10.0.0.1": probeOutput("CP-1", "debian", true), "10.0.0.2": probeOutput("w-1", "ubuntu", true)})
	var out bytes.Buffer
	if err := Apply(context.Background(), target, ApplyOptions{DryRun: true, Out: &out}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"prerequisites  cp-1", "install-kubernetes  w-1", "kubeadm-init", "join-worker", "wait-nodes-ready"} {
		if !strings.Contains(strings.Join(strings.Fields(out.String()), "  "), strings.Join(strings.Fields(want), "  ")) {
			t.Errorf("plan lacks %q:\n%s", want, out.String())
		}
	}
	for _, name := range []string{"10.0.0.1", "10.0.0.2"} {
		for _, call := range fleet.Get(name).Calls() {
			// Reads only: the probe (the encryption configuration's included), and the
			// certificates' expiry that apply warns of.
			switch call.Command {
			case "script probe", "script 'read slipway records'", "hostname", "script status", "script encryption-state":
			default:
				t.Errorf("a dry run ran %q on %s", call.Command, name)
			}
		}
	}
}

func TestProbeRefusesBadHostsBeforeChangingAnything(t *testing.T) {
	tests := []struct {
		name  string
		probe string
		want  string
	}{
		{"unsupported OS", probeOutput("w", "plan9", true), `unsupported operating system "plan9"`},
		{"no passwordless sudo", probeOutput("w", "debian", false), "cannot run commands as root without a password"},
		{"truncated probe", "os_id=debian\n", "the probe did not finish"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := testCluster(t, "10.0.0.1", "10.0.0.2")
			target, _ := fakeTarget(c, map[string]string{"10.0.0.1": probeOutput("cp", "debian", true), "10.0.0.2": tt.probe})
			err := Apply(context.Background(), target, ApplyOptions{AutoApprove: true, Out: &bytes.Buffer{}})
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "nothing was changed") {
				t.Fatalf("got %v, want an error naming %q before any change", err, tt.want)
			}
		})
	}
}

func TestApplyRefusesWithoutConfirmation(t *testing.T) {
	c := testCluster(t, "10.0.0.1")
	target, _ := fakeTarget(c, map[string]string{"10.0.0.1": probeOutput("cp", "debian", true)})
	err := Apply(context.Background(), target, ApplyOptions{Out: &bytes.Buffer{}})
	if err == nil || !strings.Contains(err.Error(), "stdin is not a terminal") {
		t.Fatalf("got %v", err)
	}
	target, _ = fakeTarget(c, map[string]string{"10.0.0.1": probeOutput("cp", "debian", true)})
	var out bytes.Buffer
	err = Apply(context.Background(), target, ApplyOptions{Out: &out, Confirm: func(string) (bool, error) { return false, nil }})
	if err != ErrNotConfirmed {
		t.Fatalf("declined plan: %v", err)
	}
	// A count is said as English says it: one host, and the plan's steps.
	if !strings.Contains(out.String(), "Probing 1 host...\n") || !regexp.MustCompile(`\): [0-9]+ steps?\n`).MatchString(out.String()) {
		t.Errorf("apply's output on one host:\n%s", out.String())
	}
}

// TestApplyLocksBeforeProbing: apply takes the lock on the leader before anything is probed,
// so the plan comes from a cluster no other run is changing, and releases it at the end; a lock
// that another live run holds stops apply before it probes anything.
func TestApplyLocksBeforeProbing(t *testing.T) {
	c := testCluster(t, "10.0.0.1")
	target, fleet := fakeTarget(c, map[string]string{"10.0.0.1": probeOutput("cp", "debian", true)})
	err := Apply(context.Background(), target, ApplyOptions{Out: &bytes.Buffer{}, Confirm: func(string) (bool, error) { return false, nil }})
	if err != ErrNotConfirmed {
		t.Fatalf("declined plan: %v", err)
	}
	cmds := fleet.Get("10.0.0.1").Commands()
	if cmds[0] != "script 'acquire the apply lock'" || cmds[1] != "script probe" || cmds[len(cmds)-1] != "script 'release the apply lock'" {
		t.Errorf("the leader received %q, want the lock taken first and released last", cmds)
	}

	held := "held 5 1700000000\ntoken=" + strings.Repeat("ab", 16) + "\nowner=ops@elsewhere pid 7 since 2025-01-01T00:00:00Z\nlocal=boot=x pidns=pid:[1] pid=7 start=1\n"
	fleet = &sshtest.Fleet{}
	fleet.Get("10.0.0.1").On(`^script 'acquire the apply lock'$`, sshtest.Response{Stdout: held})
	target = NewTarget(c, fleet)
	err = Apply(context.Background(), target, ApplyOptions{AutoApprove: true, Out: &bytes.Buffer{}})
	if err == nil || !strings.Contains(err.Error(), "another apply holds the lock /var/lib/slipway/apply.lock on 10.0.0.1 (ops@elsewhere pid 7 since 2025-01-01T00:00:00Z, refreshed 5s ago)") {
		t.Fatalf("apply with the lock held elsewhere: %v", err)
	}
	if cmds := fleet.Get("10.0.0.1").Commands(); len(cmds) != 1 {
		t.Errorf("with the lock held elsewhere the leader received %q", cmds)
	}
}

// okAddon is an object of addons.path.
const okAddon = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"

// addonsDir writes the name and content pairs as a folder of addons.path.
func addonsDir(t *testing.T, files ...string) string {
	t.Helper()
	dir := t.TempDir()
	for i := 0; i < len(files); i += 2 {
		path := filepath.Join(dir, filepath.FromSlash(files[i]))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(files[i+1]), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// inputs reads c's inputs from the test's environment.
func inputs(t *testing.T, c *v1beta1.Cluster) *Inputs {
	t.Helper()
	in, err := readInputs(c)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestApplyChecksLocalInputsBeforeAnyHost: what apply reads on this machine (S3 credentials,
// CA files, OpenStack variables, the image archive) is checked before the lock and the probe,
// so a bad one stops the run with exit code 3 (a config.Error) and not a single command on a host.
func TestApplyChecksLocalInputsBeforeAnyHost(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.txt")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	openstack := map[string]string{"OS_AUTH_URL": "https://keystone.example:5000/v3", "OS_USERNAME": "u", "OS_PASSWORD": "p", "OS_PROJECT_NAME": "demo"}
	s3 := func(c *v1beta1.Cluster) *v1beta1.SnapshotS3 {
		c.Etcd.Snapshots = &v1beta1.EtcdSnapshots{Schedule: "0 * * * *", Retain: 1, S3: &v1beta1.SnapshotS3{Endpoint: "https://s3.example", Bucket: "b"}}
		return c.Etcd.Snapshots.S3
	}
	withCCM := func(c *v1beta1.Cluster) {
		c.CloudProvider = v1beta1.CloudProvider{OpenStack: &v1beta1.OpenStackCloud{}, External: true}
	}
	for _, tc := range []struct {
		name   string
		env    map[string]string
		change func(c *v1beta1.Cluster)
		want   string
	}{
		{"no S3 access key", nil, func(c *v1beta1.Cluster) { s3(c) }, "etcd.snapshots.s3 is set: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"},
		{"an S3 CA file that is missing", map[string]string{"AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "s"},
			func(c *v1beta1.Cluster) { s3(c).CAFile = filepath.Join(dir, "missing.pem") }, "etcd.snapshots.s3.caFile " + filepath.Join(dir, "missing.pem")},
		{"an S3 access key with a line break", map[string]string{"AWS_ACCESS_KEY_ID": "AKIA\nEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret-key"},
			func(c *v1beta1.Cluster) { s3(c) }, "AWS_ACCESS_KEY_ID (12 characters) must be 3 to 128 letters"},
		{"a registry CA file that is not PEM", nil, func(c *v1beta1.Cluster) {
			c.ContainerRuntime.Containerd.Registries = map[string]v1beta1.ContainerdRegistry{"docker.io": {TLSConfig: &v1beta1.RegistryTLSConfig{CAFile: notPEM}}}
		}, "containerRuntime.containerd.registries[docker.io].tlsConfig.caFile " + notPEM},
		{"no OpenStack password", map[string]string{"OS_AUTH_URL": "https://keystone.example:5000/v3", "OS_USERNAME": "u", "OS_PROJECT_NAME": "demo"}, withCCM, "missing OS_PASSWORD"},
		{"an http:// Keystone", map[string]string{"OS_AUTH_URL": "http://keystone.example:5000/v3", "OS_USERNAME": "u", "OS_PASSWORD": "p", "OS_PROJECT_NAME": "demo"}, withCCM,
			`OS_AUTH_URL "http://keystone.example:5000/v3" is http://`},
		{"an OS_CACERT that is missing", map[string]string{"OS_AUTH_URL": "https://keystone.example:5000/v3", "OS_USERNAME": "u", "OS_PASSWORD": "p", "OS_PROJECT_NAME": "demo",
			"OS_CACERT": filepath.Join(dir, "os-ca.pem")}, withCCM, "OS_CACERT: "},
		{"an image archive that is missing", openstack, func(c *v1beta1.Cluster) {
			withCCM(c)
			c.MachineController.ImageArchive = filepath.Join(dir, "images.tar")
		}, filepath.Join(dir, "images.tar")},
		{"an addons.path folder that is missing", nil, func(c *v1beta1.Cluster) { c.Addons = &v1beta1.Addons{Path: filepath.Join(dir, "no-addons")} },
			"addons.path " + filepath.Join(dir, "no-addons") + " is invalid"},
		{"an addons.path file that does not parse", nil, func(c *v1beta1.Cluster) {
			c.Addons = &v1beta1.Addons{Path: addonsDir(t, "ok.yaml", okAddon, "web/bad.yaml", okAddon+"---\nkind: [\n")}
		},
			"web/bad.yaml:6: document 2: yaml: line 6: did not find expected node content"},
		{"an addons.path template that fails", nil, func(c *v1beta1.Cluster) {
			c.Addons = &v1beta1.Addons{Path: addonsDir(t, "t.yaml", "{{ .Config.Name }}\n")}
		},
			"template: t.yaml:1:10: executing \"t.yaml\" at <.Config.Name>: can't evaluate field Config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "OS_AUTH_URL", "OS_USERNAME", "OS_PASSWORD", "OS_PROJECT_NAME", "OS_PROJECT_ID", "OS_CACERT",
				"OS_APPLICATION_CREDENTIAL_ID", "OS_APPLICATION_CREDENTIAL_SECRET"} {
				t.Setenv(k, "")
			}
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			c := testCluster(t, "10.0.0.1")
			tc.change(c)
			target, fleet := fakeTarget(c, map[string]string{"10.0.0.1": probeOutput("cp", "debian", true)})
			for _, dry := range []bool{false, true} {
				err := Apply(context.Background(), target, ApplyOptions{DryRun: dry, AutoApprove: true, Out: &bytes.Buffer{}})
				var ce *config.Error
				if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("dry run %t: %v; want a config.Error containing %q", dry, err, tc.want)
				}
				if cmds := fleet.Get("10.0.0.1").Commands(); len(cmds) != 0 {
					t.Errorf("dry run %t: the host received %q before the inputs were checked", dry, cmds)
				}
			}
		})
	}
}

// TestApplyProgressJSON: with a JSON progress log (--log-format json), what apply reports on its
// way is one JSON entry a line there, while the plan goes to Out as text.
func TestApplyProgressJSON(t *testing.T) {
	c := testCluster(t, "10.0.0.1")
	target, _ := fakeTarget(c, map[string]string{"10.0.0.1": probeOutput("cp", "debian", true)})
	var out, log bytes.Buffer
	w := progress.NewWriter(&log)
	w.SetJSON()
	err := Apply(context.Background(), target, ApplyOptions{Out: &out, Log: w, Confirm: func(string) (bool, error) { return false, nil }})
	if err != ErrNotConfirmed {
		t.Fatalf("declined plan: %v", err)
	}
	if !strings.Contains(out.String(), "Plan for cluster") {
		t.Errorf("the plan is not on Out:\n%s", out.String())
	}
	probing := false
	for _, line := range strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n") {
		var e progress.Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("a progress line is not JSON: %q", line)
		}
		probing = probing || e.Message == "Probing 1 host..."
	}
	if !probing {
		t.Errorf("no entry says Probing 1 host...:\n%s", log.String())
	}
}
