package controller

import (
	"bufio"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/test/envtest"
)

// controllerProcess is a running fakecontroller.
type controllerProcess struct {
	cmd     *exec.Cmd
	metrics string
}

// startController builds fakecontroller as the image builds the machine-controller (static,
// -trimpath, stripped: the binary's pages in the RSS are those of what ships) and runs it as the
// machine-controller service account.
func startController(b *testing.B, env *envtest.Env, ns string, qps, workers int) *controllerProcess {
	b.Helper()
	dir := b.TempDir()
	bin := filepath.Join(dir, "fakecontroller")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./fakecontroller")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		b.Fatalf("building fakecontroller: %v", err)
	}
	if fi, err := os.Stat(bin); err == nil {
		fmt.Printf("fakecontroller binary: %d bytes\n", fi.Size())
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := envtest.WriteKubeconfig(env.ControllerConfig, kubeconfig); err != nil {
		b.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "--kubeconfig", kubeconfig, "--metrics-bind-address", addr, "--namespace", ns,
		"--kube-api-qps", strconv.Itoa(qps), "--kube-api-burst", strconv.Itoa(2*qps), "--poll-interval", "1s",
		"--workers", strconv.Itoa(workers))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	// BENCH_GOMEMLIMIT, when set, becomes the controller's GOMEMLIMIT, to measure memory under the
	// soft limit a Deployment would set.
	cmd.Env = os.Environ()
	if l := os.Getenv("BENCH_GOMEMLIMIT"); l != "" {
		cmd.Env = append(cmd.Env, "GOMEMLIMIT="+l)
	}
	if err := cmd.Start(); err != nil {
		b.Fatalf("starting fakecontroller: %v", err)
	}
	p := &controllerProcess{cmd: cmd, metrics: "http://" + addr + "/metrics"}
	b.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_, _ = cmd.Process.Wait()
	})
	envtest.Eventually(b, time.Minute, "the controller's metrics endpoint", func() (bool, string) {
		_, err := p.requests()
		return err == nil, fmt.Sprint(err)
	})
	return p
}

// reading is one reading of the controller's request counters.
type reading struct {
	total float64
	// byMethod is client-go's rest_client_requests_total by HTTP method (GET, LIST and WATCH
	// are all GET to client-go); byVerb is fakecontroller's count by verb and resource.
	byMethod, byVerb map[string]float64
}

// requests reads the controller's request counters: client-go's rest_client_requests_total
// (every request it sent) and fakecontroller's bench_api_requests_total by verb and resource.
func (p *controllerProcess) requests() (reading, error) {
	r := reading{byMethod: map[string]float64{}, byVerb: map[string]float64{}}
	resp, err := http.Get(p.metrics)
	if err != nil {
		return r, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return r, fmt.Errorf("reading %s: %s", p.metrics, resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		client := strings.HasPrefix(line, "rest_client_requests_total{")
		if !client && !strings.HasPrefix(line, "bench_api_requests_total{") {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return r, fmt.Errorf("parsing %q: %w", line, err)
		}
		if client {
			r.total += v
			r.byMethod[label(line, "method")] += v
		} else {
			r.byVerb[label(line, "verb")+" "+label(line, "resource")] += v
		}
	}
	return r, sc.Err()
}

// label returns the value of the label name in a line of the Prometheus text format.
func label(line, name string) string {
	_, rest, _ := strings.Cut(line, name+`="`)
	v, _, _ := strings.Cut(rest, `"`)
	return v
}

// perMachine formats the requests between two readings by method, per Machine.
func perMachine(before, after map[string]float64, machines float64) string {
	var parts []string
	for _, m := range slices.Sorted(maps.Keys(after)) {
		if d := after[m] - before[m]; d > 0 {
			parts = append(parts, fmt.Sprintf("%s %.2f", m, d/machines))
		}
	}
	return strings.Join(parts, ", ")
}

// memory returns the process's resident set now and its peak, in MiB.
func (p *controllerProcess) memory() (rss, peak float64, err error) {
	m, err := p.status("VmRSS:", "VmHWM:")
	return m["VmRSS:"], m["VmHWM:"], err
}

// split returns the resident set's anonymous pages (heap, stacks, runtime) and its file-backed
// pages (the binary's text and data, shared and reclaimable), in MiB.
func (p *controllerProcess) split() (anon, file float64, err error) {
	m, err := p.status("RssAnon:", "RssFile:")
	return m["RssAnon:"], m["RssFile:"], err
}

// status reads the named kB fields of /proc/<pid>/status, in MiB.
func (p *controllerProcess) status(fields ...string) (map[string]float64, error) {
	out := map[string]float64{}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return out, err
	}
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !slices.Contains(fields, f[0]) {
			continue
		}
		kb, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			return out, fmt.Errorf("/proc/%d/status: %s: %w", p.cmd.Process.Pid, line, err)
		}
		out[f[0]] = kb / 1024
	}
	return out, nil
}

// heap returns the controller's live heap after the last garbage collection in MiB, from the Go
// runtime metrics it exports: RSS minus this is collector headroom, runtime and binary pages.
func (p *controllerProcess) heap() (float64, error) {
	resp, err := http.Get(p.metrics)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "go_gc_heap_live_bytes" {
			v, err := strconv.ParseFloat(f[1], 64)
			return v / (1 << 20), err
		}
	}
	return 0, fmt.Errorf("no go_gc_heap_live_bytes in the metrics")
}
