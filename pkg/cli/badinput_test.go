package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// runWith is run with any reader as stdin, and reports how many bytes the command allocated.
func runWith(t *testing.T, stdin io.Reader, args ...string) (stdout, stderr string, code int, allocated uint64) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := NewRootCommand(Streams{In: stdin, Out: &out, Err: &errb})
	cmd.SetArgs(args)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := cmd.ExecuteContext(context.Background())
	runtime.ReadMemStats(&after)
	if err != nil {
		errb.WriteString(ErrorMessage(err) + "\n")
	}
	return out.String(), errb.String(), ExitCode(err), after.TotalAlloc - before.TotalAlloc
}

// endless is an input that never ends, like /dev/zero on stdin.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// TestBadInputIsBounded: inputs from outside are read with a limit, so an endless or huge
// input is an invalid input (exit 3) with a message naming it and the limit, and slipway's
// memory stays small; before the limits, -m /dev/zero grew until the runtime died (exit 2).
func TestBadInputIsBounded(t *testing.T) {
	write := tempWriter(t)
	manifest := "apiVersion: slipway.dev/v1beta1\nkind: Cluster\nname: x\nversions: {kubernetes: v1.36.3}\n" +
		"controlPlane: {hosts: [{publicAddress: 10.0.0.1, sshPrivateKeyFile: id}]}\n"
	// 2 MiB of list items: parsed, they took 490 MB and printed 44 MB of problems.
	bigManifest := write("big.yaml", manifest+"workers:\n"+strings.Repeat("- a\n", 2<<20/4))
	m := write("m.yaml", manifest)
	// Terraform output with 7 MiB of the user's own outputs (3.5 million numbers): not
	// slipway's business, and loaded without parsing them (parsed, they took 560 MB).
	otherOutputs := write("other.json", `{"slipway_api": {"value": {"endpoint": "10.0.0.1"}}, "big": {"value": [`+strings.Repeat("0,", 7<<20/2)+`0]}}`)
	bigContract := write("contract.json", `{"slipway_workers": {"value": {"p": {"providerSpec": {"labels": {"a": "`+strings.Repeat("x", 2<<20)+`"}}}}}}`)
	tests := []struct {
		name     string
		stdin    io.Reader
		args     []string
		code     int
		want     string
		maxAlloc uint64
	}{
		{"manifest from /dev/zero", nil, []string{"config", "dump", "-m", "/dev/zero"}, ExitConfig, "/dev/zero is larger than 1 MiB", 16 << 20},
		{"endless manifest on stdin", endless{}, []string{"config", "dump", "-m", "-"}, ExitConfig, "the manifest on stdin is larger than 1 MiB", 16 << 20},
		{"2 MiB manifest", nil, []string{"config", "dump", "-m", bigManifest}, ExitConfig, "big.yaml is larger than 1 MiB", 16 << 20},
		{"terraform output from /dev/zero", nil, []string{"config", "dump", "-m", m, "-t", "/dev/zero"}, ExitConfig, "/dev/zero is larger than 8 MiB", 64 << 20},
		{"endless terraform output on stdin", endless{}, []string{"config", "dump", "-m", m, "-t", "-"}, ExitConfig, "the Terraform output on stdin is larger than 8 MiB", 64 << 20},
		{"large outputs of the user's own", nil, []string{"config", "dump", "-m", m, "-t", otherOutputs}, ExitOK, "", 128 << 20},
		{"large slipway outputs", nil, []string{"config", "dump", "-m", m, "-t", bigContract}, ExitConfig, "slipway's outputs (slipway_*, or KubeOne's kubeone_*) are 2097", 64 << 20},
		{"apply with a manifest from /dev/zero", nil, []string{"apply", "-m", "/dev/zero", "--dry-run"}, ExitConfig, "/dev/zero is larger than 1 MiB", 16 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdin := tt.stdin
			if stdin == nil {
				stdin = strings.NewReader("")
			}
			_, stderr, code, alloc := runWith(t, stdin, tt.args...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d; stderr:\n%.2000s", code, tt.code, stderr)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr does not contain %q:\n%.2000s", tt.want, stderr)
			}
			if len(stderr) > 64<<10 {
				t.Errorf("stderr is %d bytes: problems must be listed briefly", len(stderr))
			}
			t.Logf("allocated %d KiB", alloc>>10)
			if alloc > tt.maxAlloc {
				t.Errorf("allocated %d MiB, want at most %d MiB", alloc>>20, tt.maxAlloc>>20)
			}
		})
	}
}

// TestTerraformFailureIsAnEnvironmentError: -t DIR runs the real terraform; when it fails (here
// on a broken state file) the output is not invalid, the environment is: exit 1, not 3.
func TestTerraformFailureIsAnEnvironmentError(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the terraform binary; skipped under -short")
	}
	if _, err := exec.LookPath("terraform"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("terraform is not installed, and CI must provide it: %v", err)
		}
		t.Skipf("terraform is not installed (%v); .ci/run installs it", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "terraform.tfstate"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := filepath.Join(dir, "m.yaml")
	if err := os.WriteFile(m, []byte("apiVersion: slipway.dev/v1beta1\nkind: Cluster\nname: x\nversions: {kubernetes: v1.36.3}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code, _ := runWith(t, strings.NewReader(""), "config", "dump", "-m", m, "-t", dir)
	if code != ExitFailure || !strings.Contains(stderr, "terraform output -json failed in "+dir) {
		t.Fatalf("exit code %d, want %d with terraform's failure; stderr:\n%s", code, ExitFailure, stderr)
	}
}

// TestSecretsAreNotEchoed: what slipway prints (config dump, validation errors) shows no
// secret of the manifest, and an env:NAME agent socket never prints the variable's value.
func TestSecretsAreNotEchoed(t *testing.T) {
	write := tempWriter(t)
	const secret = "hunter2-very-secret"
	t.Setenv("SLIPWAY_TEST_NOT_A_SOCKET", secret)
	head := "apiVersion: slipway.dev/v1beta1\nkind: Cluster\nname: x\nversions: {kubernetes: v1.36.3}\n"
	host := "controlPlane: {hosts: [{publicAddress: 10.0.0.1, sshPrivateKeyFile: id}]}\n"
	registries := "containerRuntime:\n  containerd:\n    registries:\n" +
		"      docker.io: {auth: {username: robot, password: " + secret + "}}\n" +
		"      quay.io: {auth: {auth: " + secret + "}}\n" +
		"      ghcr.io: {auth: {identityToken: " + secret + "}}\n"
	proxy := "proxy: {http: 'http://user:" + secret + "@proxy.example.com:3128', https: 'http://user:" + secret + "@proxy.example.com:3128'}\n"
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"config dump", []string{"config", "dump", "-m", write("dump.yaml", head+host+registries+proxy)}, ExitOK, "password: <redacted>"},
		{"config dump as JSON", []string{"config", "dump", "-o", "json", "-m", write("json.yaml", head+host+registries+proxy)}, ExitOK, `"identityToken": "\u003credacted\u003e"`},
		{"an invalid proxy URL", []string{"config", "dump", "-m", write("proxy.yaml", head+host+
			"proxy: {http: 'http://user:"+secret+"@proxy.example.com:3128/$(reboot)'}\n")}, ExitConfig, "proxy.http: Invalid value: \"http://user:xxxxx@proxy.example.com:3128/$(reboot)\""},
		{"credentials in a mirror URL", []string{"config", "dump", "-m", write("mirror.yaml", head+host+
			"containerRuntime: {containerd: {registries: {docker.io: {mirrors: ['https://user:"+secret+"@mirror.example.com']}}}}\n")}, ExitConfig, "must not hold credentials"},
		{"a cloud configuration", []string{"config", "dump", "-m", write("cloud.yaml", head+host+
			"cloudProvider: {openstack: {}, external: true, cloudConfig: \"[Global]\\npassword = "+secret+"\"}\n")}, ExitConfig, "cloudProvider.cloudConfig: Forbidden: not supported"},
		{"an agent socket variable that holds no socket", []string{"config", "dump", "-m", write("agent.yaml", head+
			"controlPlane: {hosts: [{publicAddress: 10.0.0.1, sshAgentSocket: 'env:SLIPWAY_TEST_NOT_A_SOCKET'}]}\n")}, ExitConfig,
			"the variable SLIPWAY_TEST_NOT_A_SOCKET does not hold the path of an existing Unix socket (its value is not shown)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code, _ := runWith(t, strings.NewReader(""), tt.args...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			if !strings.Contains(stdout+stderr, tt.want) {
				t.Errorf("output does not contain %q:\n%s%s", tt.want, stdout, stderr)
			}
			if strings.Contains(stdout+stderr, secret) {
				t.Errorf("the secret is printed:\n%s%s", stdout, stderr)
			}
		})
	}
	// --show-secrets is the explicit way to see them.
	stdout, _, code, _ := runWith(t, strings.NewReader(""), "config", "dump", "--show-secrets", "-m", write("show.yaml", head+host+registries))
	if code != ExitOK || strings.Count(stdout, secret) != 3 {
		t.Errorf("config dump --show-secrets: code %d, %d secrets shown, want 3:\n%s", code, strings.Count(stdout, secret), stdout)
	}
}
