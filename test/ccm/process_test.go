package ccm

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
	"github.com/slipway-dev/slipway/test/envtest"
)

const binary = "openstack-cloud-controller-manager"

// ccmBinary returns the path of the CCM, building it with build.sh on first use (several
// minutes cold, milliseconds warm). build/ccm/go.mod names the version: the release whose
// Kubernetes libraries match envtest.KubeVersion. A build that fails skips the test, except in CI.
func ccmBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the OpenStack cloud-controller-manager; skipped under -short")
	}
	_, file, _, _ := runtime.Caller(0)
	cmd := exec.Command("bash", filepath.Join(filepath.Dir(file), "build.sh"))
	var stderr bytes.Buffer
	cmd.Stderr = io.MultiWriter(&stderr, os.Stderr) // a cold build says so while it runs
	out, err := cmd.Output()
	if err != nil {
		msg := fmt.Sprintf("building %s with build.sh: %v\n%s", binary, err, tail(stderr.Bytes(), 4096))
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return filepath.Join(strings.TrimSpace(string(out)), binary)
}

// writeCloudConfig writes the CCM's cloud.conf for the simulator's project. It holds the
// password, so it is written 0600.
func writeCloudConfig(t *testing.T, sim *openstacktest.Sim, path string) {
	t.Helper()
	global := [][2]string{
		{"auth-url", sim.AuthURL()},
		{"username", openstacktest.Username},
		{"password", openstacktest.Password},
		{"user-domain-name", openstacktest.DomainName},
		{"tenant-name", openstacktest.ProjectName},
		{"tenant-domain-name", openstacktest.DomainName},
		{"region", sim.Region()},
	}
	var b strings.Builder
	b.WriteString("[Global]\n")
	for _, kv := range global {
		fmt.Fprintf(&b, "%s = %s\n", kv[0], gcfgQuote(kv[1]))
	}
	// Services of type LoadBalancer are not this test's concern: the service controller, the one
	// user of this section, is not started, and it would want Octavia, which the simulator's
	// catalog does not list yet.
	b.WriteString("\n[LoadBalancer]\nenabled = false\n")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// gcfgQuote quotes a value for the INI dialect (gcfg) the CCM reads its config in, where a bare
// value loses its meaning at ';' or '#' and at surrounding blanks.
func gcfgQuote(v string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
}

// process is a running CCM whose output goes to a file, kept for the log of a failed test.
type process struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// startCCM runs the CCM until the test ends; it stops it then, and logs its output if the test
// failed.
func startCCM(t *testing.T, bin string, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(bin, args...), log: filepath.Join(t.TempDir(), binary+".log"), done: make(chan struct{})}
	out, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close() // the child has its own copy of the descriptor
	p.cmd.Stdout, p.cmd.Stderr = out, out
	// OS_CCM_REGIONAL would change the provider IDs the test expects.
	p.cmd.Env = append(os.Environ(), "OS_CCM_REGIONAL=false")
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			if raw, err := os.ReadFile(p.log); err != nil {
				t.Logf("reading the output of %s: %v", binary, err)
			} else {
				t.Logf("%s output (last 32 KiB):\n%s", binary, tail(raw, 32<<10))
			}
		}
	})
	return p
}

// exited reports whether the CCM has stopped, and how, for a wait that would otherwise time out
// on a dead process.
func (p *process) exited() (bool, string) {
	select {
	case <-p.done:
		return true, fmt.Sprintf("%s exited: %v", binary, p.err)
	default:
		return false, ""
	}
}

// eventually is envtest.Eventually that gives up at once when the CCM has died.
func (p *process) eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	envtest.Eventually(t, timeout, what, func() (bool, string) {
		if dead, why := p.exited(); dead {
			t.Fatalf("waiting for %s: %s", what, why)
		}
		return cond()
	})
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
