package terraform

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
	"github.com/slipway-dev/slipway/test/openstack-sim/hosts"
	"github.com/slipway-dev/slipway/test/sandbox/sandboxapi"
)

// This file holds what the quick start's tests share: this package's, which applies
// terraform/openstack alone, and test/e2e's, which runs slipway on what it built.

// Tools finds terraform and builds terraform-provider-openstack with provider.sh, which writes
// a CLI config whose dev_overrides point Terraform at it, and returns terraform's path.
func Tools(t *testing.T, cliConfig string) string {
	t.Helper()
	bin := Component(t, "terraform", func() (string, error) { return exec.LookPath("terraform") })
	Component(t, "terraform-provider-openstack", func() (string, error) {
		root, err := sandboxapi.RepoRoot()
		if err != nil {
			return "", err
		}
		out, err := exec.Command(filepath.Join(root, "test", "terraform", "provider.sh"), "--cli-config", cliConfig).CombinedOutput()
		return string(out), err
	})
	return bin
}

// Env is what terraform needs to apply against sim: the CLI config from Tools, and the OS_*
// variables an openrc file sets (OS_CACERT when the simulator serves https with its own CA,
// written to caFile).
func Env(sim *openstacktest.Sim, cliConfig, caFile string) map[string]string {
	env := map[string]string{"TF_CLI_CONFIG_FILE": cliConfig, "TF_IN_AUTOMATION": "1", "CHECKPOINT_DISABLE": "1",
		"OS_AUTH_URL": sim.AuthURL(), "OS_USERNAME": openstacktest.Username, "OS_PASSWORD": openstacktest.Password,
		"OS_PROJECT_NAME": openstacktest.ProjectName, "OS_USER_DOMAIN_NAME": openstacktest.DomainName,
		"OS_PROJECT_DOMAIN_NAME": openstacktest.DomainName, "OS_REGION_NAME": sim.Region()}
	if caFile != "" {
		env["OS_CACERT"] = caFile
	}
	return env
}

// Runner runs terraform's steps in a configuration directory (with terraform-exec, as slipway
// -t does), and shows what a failed step printed.
type Runner struct {
	TF  *tfexec.Terraform
	log bytes.Buffer
}

// NewRunner runs bin in dir.
func NewRunner(t *testing.T, dir, bin string) *Runner {
	t.Helper()
	tf, err := tfexec.NewTerraform(dir, bin)
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{TF: tf}
	tf.SetStdout(&r.log)
	tf.SetStderr(&r.log)
	return r
}

// Do runs one step for at most 15 minutes; when it fails, t fails with the step's error and the
// last 16 KiB of its output (a plan's shows the changes it found).
func (r *Runner) Do(t *testing.T, name string, run func(context.Context, *tfexec.Terraform) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	r.log.Reset()
	if err := run(ctx, r.TF); err != nil {
		out := r.log.String()
		if len(out) > 16<<10 {
			out = out[len(out)-16<<10:]
		}
		t.Fatalf("terraform %s: %v\n%s", name, err, out)
	}
}

// Component finds or builds something a test needs. When it cannot, the test skips, except
// under CI=true, where every component must be there.
func Component(t *testing.T, name string, get func() (string, error)) string {
	t.Helper()
	out, err := get()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not available, and CI must provide it: %v\n%s", name, err, out)
		}
		t.Skipf("%s is not available (%v); .ci/run provides it\n%s", name, err, out)
	}
	return strings.TrimSpace(out)
}

// CopyConfig copies the configuration's files, so that state and lock files never land in
// the repository.
func CopyConfig(t *testing.T, src, dst string) {
	t.Helper()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".tf") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Cloud is what the simulator holds, as IDs by kind.
type Cloud map[string][]string

// Snapshot lists what the simulator holds.
func Snapshot(sim *openstacktest.Sim) Cloud {
	ids := func(n int, id func(int) string) []string {
		out := []string{}
		for i := range n {
			out = append(out, id(i))
		}
		return out
	}
	srv, ports, fips, vols := sim.Servers(), sim.Ports(), sim.FloatingIPs(), sim.Volumes()
	nets, subnets, sgs, groups, lbs := sim.Networks(), sim.Subnets(), sim.SecurityGroups(), sim.ServerGroups(), sim.LoadBalancers()
	return Cloud{
		"servers":         ids(len(srv), func(i int) string { return srv[i].Name }),
		"ports":           ids(len(ports), func(i int) string { return ports[i].Name + " " + ports[i].ID }),
		"floating IPs":    ids(len(fips), func(i int) string { return fips[i].Address }),
		"volumes":         ids(len(vols), func(i int) string { return vols[i].ID }),
		"networks":        ids(len(nets), func(i int) string { return nets[i].Name + " " + nets[i].ID }),
		"subnets":         ids(len(subnets), func(i int) string { return subnets[i].Name + " " + subnets[i].ID }),
		"security groups": ids(len(sgs), func(i int) string { return sgs[i].Name + " " + sgs[i].ID }),
		"server groups":   ids(len(groups), func(i int) string { return groups[i].Name + " " + groups[i].ID }),
		"load balancers":  ids(len(lbs), func(i int) string { return lbs[i].Name + " " + lbs[i].ID }),
	}
}

// CheckNothingLeft compares the simulator with its state before apply, and asks the API for
// the routers and keypairs, which the simulator does not list for tests, by the prefix of the
// cluster's names.
func CheckNothingLeft(ctx context.Context, t *testing.T, sim *openstacktest.Sim, seeded Cloud, prefix string) {
	t.Helper()
	after := Snapshot(sim)
	for kind, before := range seeded {
		if !slices.Equal(after[kind], before) {
			t.Errorf("%s after destroy: %v, before apply: %v", kind, after[kind], before)
		}
	}
	pc, err := sim.ProjectClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	eo := gophercloud.EndpointOpts{Region: sim.Region()}
	network, err := openstack.NewNetworkV2(pc, eo)
	if err != nil {
		t.Fatal(err)
	}
	compute, err := openstack.NewComputeV2(pc, eo)
	if err != nil {
		t.Fatal(err)
	}
	pages, err := routers.List(network, routers.ListOpts{}).AllPages(ctx)
	rs, _ := routers.ExtractRouters(pages)
	for _, r := range rs {
		if strings.HasPrefix(r.Name, prefix) {
			t.Errorf("router %s (%s) left behind", r.Name, r.ID)
		}
	}
	if err != nil {
		t.Errorf("listing routers: %v", err)
	}
	kpages, err := keypairs.List(compute, nil).AllPages(ctx)
	kps, _ := keypairs.ExtractKeyPairs(kpages)
	for _, k := range kps {
		if strings.HasPrefix(k.Name, prefix) {
			t.Errorf("keypair %s left behind", k.Name)
		}
	}
	if err != nil {
		t.Errorf("listing keypairs: %v", err)
	}
}

// CheckNoHosts proves that no host, network or volume of the cloud is left in Docker, except
// the networks of the Neutron networks keep names (by ID): an external network on which this
// machine serves the cloud's API, say.
func CheckNoHosts(ctx context.Context, t *testing.T, cloud string, keep ...string) {
	t.Helper()
	format := `{{.Label "` + hosts.Label + `.network"}} {{.Name}}`
	for _, kind := range [][]string{{"ps", "-a", "--format", "{{.Names}}"}, {"network", "ls", "--format", format}, {"volume", "ls", "-q"}} {
		deadline := time.Now().Add(30 * time.Second)
		for {
			out, err := sandboxapi.Docker(ctx, append(kind, "--filter", "label="+hosts.Label+"="+cloud)...)
			var left []string
			for _, line := range sandboxapi.Lines(out) {
				if id, _, _ := strings.Cut(line, " "); kind[0] != "network" || !slices.Contains(keep, id) {
					left = append(left, line)
				}
			}
			if err == nil && len(left) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("after destroy, docker %s lists %q (%v)", kind[0], left, err)
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}
