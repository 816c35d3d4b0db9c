package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"text/template"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/test/sandbox/sandboxapi"
)

// harness is one sandbox and a working directory for slipway runs.
type harness struct {
	t   *testing.T
	sb  *sandboxapi.Sandbox
	dir string
	// env adds environment variables to every slipway run (credentials a manifest needs).
	env []string
}

// needDocker skips (or, in CI, fails) when no Docker daemon answers.
func needDocker(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("e2e test: needs Docker sandbox hosts; skipped under -short")
	}
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	if err := exec.Command("docker", "info").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no Docker daemon answers, and CI must provide one: %v", err)
		}
		t.Skipf("no Docker daemon answers (%v); `make ci-docker` starts one", err)
	}
}

// versions are the Kubernetes versions the sandbox builds and serves for the e2e scenarios.
func versions() []string {
	out := []string{previous}
	for _, v := range []string{current, newest} {
		if v != out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out
}

// download fetches url (from the sandbox's assets host) into the file dst, 0600, as an operator
// would fill assets.upload.directory.
func (h *harness) download(url, dst string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		h.t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		h.t.Fatal(err)
	}
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		h.t.Fatalf("GET %s: %v", url, err)
	}
	if err := f.Close(); err != nil {
		h.t.Fatal(err)
	}
}

// upSandbox brings up a sandbox for one test, removed when the test ends.
func upSandbox(t *testing.T, name, subnet string, hosts, controlPlanes int, lb bool) *harness {
	t.Helper()
	return upSandboxWith(t, name, subnet, hosts, controlPlanes, lb, versions())
}

// upSandboxWith is upSandbox serving only the given Kubernetes versions.
func upSandboxWith(t *testing.T, name, subnet string, hosts, controlPlanes int, lb bool, versions []string) *harness {
	t.Helper()
	needDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
	defer cancel()
	var log bytes.Buffer
	sb, err := sandboxapi.Up(ctx, sandboxapi.Options{
		Name: name, Dir: filepath.Join(t.TempDir(), "sandbox"), Subnet: subnet,
		Hosts: hosts, ControlPlanes: controlPlanes, LB: lb, Log: &log, Versions: versions,
	})
	if err != nil {
		t.Fatalf("sandbox up: %v\n%s", err, log.String())
	}
	t.Logf("sandbox %s up:\n%s", name, log.String())
	t.Cleanup(func() {
		if os.Getenv("SLIPWAY_E2E_KEEP") != "" {
			t.Logf("keeping sandbox %s (SLIPWAY_E2E_KEEP); remove it with: go run ./test/sandbox down --dir %s", name, sb.Dir)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if err := sb.Down(ctx); err != nil {
			t.Errorf("sandbox down: %v", err)
		}
	})
	return &harness{t: t, sb: sb, dir: t.TempDir()}
}

// with returns the harness bound to a subtest, so that failures stop the right test.
func (h *harness) with(t *testing.T) *harness {
	c := *h
	c.t = t
	return &c
}

// manifestParams fill the e2e manifest template.
type manifestParams struct {
	Name, Version, CNI string
	// Registry, Files and DNS locate the assets; default the sandbox's assets host.
	Registry, Files    string
	ContainerdReleases string
	DNS                string
	// CgroupV1 opts the kubelets into cgroup v1 (see sandboxapi.CgroupV1); writeManifest sets it
	// on cgroup v1 hosts unless NoCgroupV1OptIn.
	CgroupV1        bool
	NoCgroupV1OptIn bool
	ControlPlanes   []sandboxapi.Host
	Workers         []sandboxapi.Host
	Endpoint        string
	KeyFile         string
	Extra           string
	// WorkerFields are added to every static worker's host entry (a YAML flow mapping's fields).
	WorkerFields string
	// Upload, when set, is assets.upload.directory instead of the sandbox's package repositories.
	Upload string
	// Cloud is the cloudProvider mapping; default {none: {}}.
	Cloud string
	// OverwriteRegistry, when set, is registryConfiguration.overwriteRegistry (plain http), and
	// the manifest has no registry mirror: every image comes from there.
	OverwriteRegistry string
}

var manifestTemplate = template.Must(template.New("m").Parse(`apiVersion: slipway.dev/v1beta1
kind: Cluster
name: {{.Name}}
versions:
  kubernetes: {{.Version}}
{{- if .ControlPlanes}}
apiEndpoint:
  host: {{.Endpoint}}
controlPlane:
  hosts:
{{- range .ControlPlanes}}
    - {publicAddress: {{.IP}}, hostname: {{.Name}}, sshPrivateKeyFile: {{$.KeyFile}}, sshHostPublicKey: "{{.HostKey}}"}
{{- end}}
{{- end}}
{{- if .Workers}}
staticWorkers:
  hosts:
{{- range .Workers}}
    - {publicAddress: {{.IP}}, hostname: {{.Name}}, sshPrivateKeyFile: {{$.KeyFile}}, sshHostPublicKey: "{{.HostKey}}"{{with $.WorkerFields}}, {{.}}{{end}}}
{{- end}}
{{- end}}
clusterNetwork:
  cni: {{.CNI}}
  upstreamDNS: [{{.DNS}}]
  # Hosts are containers: their conntrack limit is read-only.
  kubeProxy: {conntrackMaxPerCore: 0}
# They share this machine's disk: no disk-pressure eviction (as in kind).
kubelet:
  evictionHard: {memory.available: 100Mi, nodefs.available: "0%", nodefs.inodesFree: "0%", imagefs.available: "0%"}
{{- if .CgroupV1}}
  allowCgroupV1: true
{{- end}}
cloudProvider: {{.Cloud}}
containerRuntime:
  containerd:
    # containerd 2 (for v1.36 on) from the sandbox, over plain http on its own network.
    release: {baseURL: "{{.ContainerdReleases}}", insecure: true}
{{- if .OverwriteRegistry}}
# Every image from one registry path, over plain http; no mirror.
registryConfiguration: {overwriteRegistry: "{{.OverwriteRegistry}}", insecureRegistry: true}
{{- else}}
    registries:
      registry.k8s.io: {mirrors: ["{{.Registry}}"]}
      ghcr.io: {mirrors: ["{{.Registry}}"]}
{{- end}}
{{- if .Upload}}
assets:
  upload: {directory: "{{.Upload}}"}
{{- else}}
# The sandbox serves packages over plain http, on its own network.
assets:
  packages: {baseURL: "{{.Files}}", insecure: true}
{{- end}}
{{.Extra}}`))

// writeManifest writes a manifest for the given hosts and returns its path.
func (h *harness) writeManifest(file string, p manifestParams) string {
	h.t.Helper()
	if p.Name == "" {
		p.Name = "e2e"
	}
	if p.CNI == "" {
		p.CNI = "{flannel: {}}"
	}
	if p.Cloud == "" {
		p.Cloud = "{none: {}}"
	}
	if p.Files == "" { // the sandbox's assets host, as the sandbox network sees it
		p.Registry, p.Files, p.DNS = h.sb.Assets.Registry, h.sb.Assets.Files, h.sb.Assets.IP
	}
	p.ContainerdReleases, p.CgroupV1 = p.Files+sandboxapi.ContainerdReleasePath, h.sb.CgroupV1 && !p.NoCgroupV1OptIn
	p.KeyFile = h.sb.Path(sandboxapi.KeyFile)
	if p.Endpoint == "" {
		p.Endpoint = strings.Split(h.sb.Endpoint, ":")[0]
	}
	var b bytes.Buffer
	if err := manifestTemplate.Execute(&b, p); err != nil {
		h.t.Fatal(err)
	}
	path := filepath.Join(h.dir, file)
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		h.t.Fatal(err)
	}
	return path
}

// host returns a sandbox host by name, re-reading the state (Recreate may change keys).
func (h *harness) host(name string) sandboxapi.Host {
	h.t.Helper()
	for _, x := range h.sb.Hosts {
		if x.Name == name {
			return x
		}
	}
	h.t.Fatalf("no sandbox host %s", name)
	return sandboxapi.Host{}
}

func (h *harness) hosts(names ...string) []sandboxapi.Host {
	var out []sandboxapi.Host
	for _, n := range names {
		out = append(out, h.host(n))
	}
	return out
}

// result is one slipway run.
type result struct {
	out      string // stdout and stderr, interleaved
	stdout   string
	code     int
	killed   bool
	duration time.Duration
}

// slipway runs the binary in the harness directory. env adds environment variables.
func (h *harness) slipway(env []string, args ...string) result {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, slipwayBin, args...)
	cmd.Dir = h.dir
	cmd.Env = append(append(append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(h.dir, "config")), h.env...), env...)
	// out interleaves both streams; it must serialize writes and must not offer ReadFrom:
	// exec copies stderr into a bytes.Buffer with ReadFrom, which holds the buffer's tail across
	// a blocking read and overwrites whatever stdout wrote meanwhile.
	var out lockedBuffer
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.MultiWriter(&out, &stdout), &out
	start := time.Now()
	err := cmd.Run()
	r := result{out: out.String(), stdout: stdout.String(), duration: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			r.killed = true
		}
	default:
		h.t.Fatalf("running slipway %s: %v", strings.Join(args, " "), err)
	}
	// The log carries the wall-clock time of each line, so that what slipway did can be
	// matched with what the workload prober saw.
	h.t.Logf("slipway %s (%s, exit %d):\n%s", strings.Join(args, " "), r.duration.Round(time.Second), r.code, redactKeys(out.Stamped()))
	return r
}

// keyField matches the private key and token fields of a kubeconfig that slipway kubeconfig
// prints, up to the end of the line.
var keyField = regexp.MustCompile(`(?m)^(.*\b(?:client-key-data|token):\s*)\S.*$`)

// redactKeys hides the private keys and tokens in slipway's output before it goes to the test
// log: a kubeconfig printed by `slipway kubeconfig` would otherwise put a client key in CI's
// output. The test itself reads the unredacted result.
func redactKeys(s string) string {
	return keyField.ReplaceAllString(s, "${1}<redacted>")
}

// lockedBuffer is a Writer that several goroutines may share. Beside the plain text it keeps
// a copy in which each line starts with the time its first byte arrived.
type lockedBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	stamped bytes.Buffer
	midLine bool
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now().Format("15:04:05.000 ")
	for rest := p; len(rest) > 0; {
		if !l.midLine {
			l.stamped.WriteString(now)
		}
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line = rest[:i+1]
		}
		l.stamped.Write(line)
		l.midLine = line[len(line)-1] != '\n'
		rest = rest[len(line):]
	}
	return l.b.Write(p)
}

// Stamped is the text with each line's arrival time.
func (l *lockedBuffer) Stamped() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stamped.String()
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// mustApply runs apply to completion and fails the test otherwise.
func (h *harness) mustApply(manifest string, extra ...string) result {
	h.t.Helper()
	r := h.slipway(nil, append([]string{"apply", "-m", manifest, "--auto-approve"}, extra...)...)
	if r.code != 0 {
		h.t.Fatalf("apply failed with exit code %d", r.code)
	}
	return r
}

// applyKilledAt runs apply with the kill hook at step and expects it to die there.
func (h *harness) applyKilledAt(manifest, step string) {
	h.t.Helper()
	h.applyKilledWith(nil, manifest, step)
}

// applyKilledWith is applyKilledAt with env added to slipway's environment.
func (h *harness) applyKilledWith(env []string, manifest, step string) {
	h.t.Helper()
	r := h.slipway(append([]string{"SLIPWAY_TEST_KILL_AT=" + step}, env...), "apply", "-m", manifest, "--auto-approve")
	if !r.killed {
		h.t.Fatalf("apply was to be killed at %s but ended with exit code %d", step, r.code)
	}
}

// plan returns the plan apply would carry out.
func (h *harness) plan(manifest string) plan.Plan {
	h.t.Helper()
	return h.planWith(nil, manifest)
}

// planWith is plan with env added to slipway's environment (a cloud's OS_* variables) and
// extra arguments for apply (-t).
func (h *harness) planWith(env []string, manifest string, extra ...string) plan.Plan {
	h.t.Helper()
	r := h.slipway(env, append([]string{"apply", "-m", manifest, "--dry-run", "-o", "json"}, extra...)...)
	if r.code != 0 {
		h.t.Fatalf("apply --dry-run failed with exit code %d", r.code)
	}
	var p plan.Plan
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		h.t.Fatalf("apply --dry-run -o json printed no JSON plan on stdout: %v", err)
	}
	return p
}

func stepList(p plan.Plan) []string {
	var s []string
	for _, st := range p.Steps {
		s = append(s, st.String())
	}
	return s
}

// kube returns a client from the kubeconfig apply saved.
func (h *harness) kube(name string) *kubernetes.Clientset {
	h.t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(h.dir, name+"-kubeconfig"))
	if err != nil {
		h.t.Fatal(err)
	}
	cfg.Timeout = 30 * time.Second
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

// onHost runs a shell command in a sandbox host's container.
func (h *harness) onHost(host, script string) (string, error) {
	out, err := exec.Command("docker", "exec", h.host(host).Container, "bash", "-c", script).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s: %s: %v: %s", host, script, err, out)
	}
	return string(out), nil
}
