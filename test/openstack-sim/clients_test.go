package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
)

// The tests in clients_*_test.go run the real, unmodified `openstack` command-line client
// (Debian's python3-openstackclient) against a simulator started in this process. They live
// beside the standalone command because they test the simulator as a cloud that outside
// clients use, and they reach its Go API (quotas, extra specs, introspection) to set up cases
// and to check what the client changed.

// cli runs the openstack command against one simulator with a fixed environment.
type cli struct {
	bin string
	env []string
	sim *openstacktest.Sim
}

// openstackCLI finds the openstack binary: it skips the test when it is missing, except under
// CI=true, where nothing may skip.
func openstackCLI(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skipping the python-openstackclient tests (about a minute of CLI runs)")
	}
	bin, err := exec.LookPath("openstack")
	if err != nil {
		msg := "the openstack CLI is not on PATH (Debian: apt-get install python3-openstackclient; `make ci-deps` installs it)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// newCLI starts a simulator and points the CLI at it with OS_* variables. HOME is a fresh
// directory, so no clouds.yaml or cache of the machine's user gets in the way.
func newCLI(t *testing.T, bin string, opts openstacktest.Options) *cli {
	t.Helper()
	sim := openstacktest.New(opts)
	t.Cleanup(sim.Close)
	return &cli{bin: bin, sim: sim, env: append(baseEnv(t),
		"OS_AUTH_URL="+sim.AuthURL(), "OS_REGION_NAME="+sim.Region(), "OS_IDENTITY_API_VERSION=3",
		"OS_USERNAME="+openstacktest.Username, "OS_PASSWORD="+openstacktest.Password,
		"OS_USER_DOMAIN_NAME="+openstacktest.DomainName, "OS_PROJECT_DOMAIN_NAME="+openstacktest.DomainName,
		"OS_PROJECT_NAME="+openstacktest.ProjectName)}
}

func baseEnv(t *testing.T) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C.UTF-8",
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost"}
}

// withCloudsYAML is the same CLI configured the other way: a clouds.yaml and OS_CLOUD.
func (c *cli) withCloudsYAML(t *testing.T) *cli {
	t.Helper()
	dir := t.TempDir()
	yaml := fmt.Sprintf(`clouds:
  sim:
    auth:
      auth_url: %s
      username: %s
      password: %s
      project_name: %s
      user_domain_name: %s
      project_domain_name: %s
    region_name: %s
    identity_api_version: 3
`, c.sim.AuthURL(), openstacktest.Username, openstacktest.Password, openstacktest.ProjectName,
		openstacktest.DomainName, openstacktest.DomainName, c.sim.Region())
	path := filepath.Join(dir, "clouds.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return &cli{bin: c.bin, sim: c.sim, env: append(baseEnv(t), "OS_CLIENT_CONFIG_FILE="+path, "OS_CLOUD=sim")}
}

// run runs one command and returns its stdout, or an error carrying the exit status and stderr.
func (c *cli) run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Env = c.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("openstack %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// ok runs a command that must succeed.
func (c *cli) ok(t *testing.T, args ...string) string {
	t.Helper()
	out, err := c.run(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// json runs a command with -f json and decodes its output into v.
func (c *cli) json(t *testing.T, v any, args ...string) {
	t.Helper()
	out := c.ok(t, append(args, "-f", "json")...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("openstack %s: decoding %q: %v", strings.Join(args, " "), out, err)
	}
}

// fails runs a command that must fail with exit status 1 and a message containing want.
func (c *cli) fails(t *testing.T, want string, args ...string) {
	t.Helper()
	_, err := c.run(args...)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("openstack %s: want exit status 1, got %v", strings.Join(args, " "), err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("openstack %s: want the message %q, got %v", strings.Join(args, " "), want, err)
	}
}

// obj is a JSON object printed by the CLI.
type obj map[string]any

func (o obj) str(key string) string { s, _ := o[key].(string); return s }
