package terraform

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"
	"golang.org/x/crypto/ssh"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
	"github.com/slipway-dev/slipway/test/openstack-sim/hosts"
)

// TestOpenStackQuickStart applies terraform/openstack against the simulator, plans again and
// expects no change, reads the slipway_* outputs through slipway's own parser, destroys, and
// proves through the simulator's introspection and API that nothing is left.
//
// terraform-exec drives terraform, as pkg/terraform does for `slipway -t`: its Plan reads
// -detailed-exitcode for us, and its errors carry terraform's stderr. There is no `terraform
// init`: with dev_overrides Terraform says to skip it, and it would still ask the registry for
// the overridden provider.
func TestOpenStackQuickStart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds terraform-provider-openstack and runs terraform; skipped under -short")
	}
	work := t.TempDir()
	cliConfig := filepath.Join(work, "terraform.rc")
	bin := Tools(t, cliConfig)

	// Servers boot as sandbox hosts, and load balancers run as amphorae: the quick start is
	// real infrastructure.
	Component(t, "a Docker engine for the simulator's hosts", func() (string, error) {
		out, err := exec.Command("docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput()
		return string(out), err
	})
	b, err := hosts.New(context.Background(), hosts.Options{Name: cloudName, Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := b.Close(context.Background()); err != nil {
			t.Errorf("removing the hosts: %v", err)
		}
	}()
	// The calls the simulator refused are logged: the first thing to read when terraform fails.
	refused := &calls{}
	sim := openstacktest.New(openstacktest.Options{Logf: refused.record, Hypervisor: b})
	defer sim.Close()
	defer func() { t.Logf("API calls answered with an error (%d):\n%s", refused.len(), refused.String()) }()
	seeded := Snapshot(sim)
	dir := filepath.Join(work, "openstack")
	CopyConfig(t, "../../terraform/openstack", dir)
	writeVars(t, dir, work)
	for k, v := range Env(sim, cliConfig, "") {
		t.Setenv(k, v)
	}
	for _, k := range []string{"OS_CLOUD", "OS_TOKEN", "OS_PROJECT_ID", "OS_TENANT_NAME", "OS_APPLICATION_CREDENTIAL_ID"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	tf := NewRunner(t, dir, bin)
	destroyed := false
	defer func() {
		if !destroyed { // leave no state behind a failed run; the simulator goes with the test anyway
			_ = tf.TF.Destroy(context.Background())
		}
	}()

	tf.Do(t, "apply", func(ctx context.Context, tf *tfexec.Terraform) error { return tf.Apply(ctx) })
	tf.Do(t, "plan -detailed-exitcode", func(ctx context.Context, tf *tfexec.Terraform) error {
		changes, err := tf.Plan(ctx)
		if err == nil && changes {
			err = errors.New("the plan after apply has changes (exit code 2)")
		}
		return err
	})
	checkOutputs(ctx, t, sim, dir)
	checkExample(ctx, t, tf.TF, dir)
	checkLoadBalancer(t, sim)
	checkHosts(ctx, t, sim, dir, filepath.Join(work, "id_ed25519"))

	tf.Do(t, "destroy", func(ctx context.Context, tf *tfexec.Terraform) error { return tf.Destroy(ctx) })
	destroyed = true
	CheckNothingLeft(ctx, t, sim, seeded, "sim-")
	CheckNoHosts(ctx, t, cloudName)
}

// writeVars writes terraform.tfvars.json for the simulator: its external network, a seeded
// image and flavors, and a fresh SSH key (private key 0600).
func writeVars(t *testing.T, dir, work string) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "slipway-terraform-test")
	if err != nil {
		t.Fatal(err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(work, "id_ed25519")
	if err := os.WriteFile(key, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key+".pub", ssh.MarshalAuthorizedKey(sshPub), 0o644); err != nil {
		t.Fatal(err)
	}
	vars, err := json.Marshal(map[string]any{
		"cluster_name": "sim", "external_network_name": "public", "image": "debian-12",
		"bastion_flavor": "m1.small", "control_plane_flavor": "m1.medium", "worker_flavor": "m1.medium",
		"ssh_user": "debian", "ssh_public_key_file": key + ".pub", "ssh_private_key_file": key,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "terraform.tfvars.json"), vars, 0o644); err != nil {
		t.Fatal(err)
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// calls keeps the simulator's log lines of calls answered with a status of 400 or more.
type calls struct {
	mu    sync.Mutex
	lines []string
}

func (c *calls) record(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	_, status, _ := strings.Cut(line, " -> ")
	if code, err := strconv.Atoi(status); err != nil || code < 400 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines = append(c.lines, line)
}

func (c *calls) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.lines)
}

func (c *calls) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.lines, "\n")
}
