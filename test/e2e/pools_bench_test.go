//go:build bench

package e2e

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestBenchPools measures the worker half on this machine (make bench-pools; figures go to
// test/bench/pools.md by hand). It is a benchmark, built only with -tags bench, so it never runs
// or skips in `make test`. On one sandbox (3 control planes behind the load balancer, and one
// spare host) beside the OpenStack simulator:
//
//  1. apply of the HA control plane with the machine-controller and the cloud-controller-manager
//     but no pool, then reset, then the same apply with a pool of 2: what the pool adds;
//  2. the pool 0 → 3 until 3 Nodes are Ready, then a rolling update of the 3 (a new flavor);
//     for every new Machine, the time from its creation to its Node's Ready condition;
//  3. the baseline for that: the same user-data run by hand (cloud-init on the spare host) until
//     its Node is Ready.
func TestBenchPools(t *testing.T) {
	load := func() string {
		b, _ := os.ReadFile("/proc/loadavg")
		return strings.Join(strings.Fields(string(b))[:3], " ")
	}
	t.Logf("load average at the start: %s", load())
	h := upSandbox(t, "benchpools", "172.30.252.0/24", 4, 3, true)
	cloud := h.startCloud(t, "benchpools")
	archive := h.buildImages(t, "bench")
	manifest := func(file, workers string) string {
		return h.writeManifest(file, manifestParams{Name: "e2e", Version: current, ControlPlanes: h.hosts("cp-1", "cp-2", "cp-3"),
			Cloud: "{openstack: {}, external: true}", Extra: machineControllerYAML("bench", archive) + workers})
	}
	pool := func(replicas int, flavor string) string {
		return manifest(fmt.Sprintf("bench-%d-%s.yaml", replicas, flavor), poolYAML(replicas, flavor))
	}
	var rows [][2]string
	row := func(what string, d time.Duration) {
		rows = append(rows, [2]string{what, fmt.Sprintf("%.1f s", d.Seconds())})
		t.Logf("%s: %.1f s (load average %s)", what, d.Seconds(), load())
	}
	timed := func(args ...string) time.Duration {
		t.Helper()
		r := h.slipway(cloud.env, args...)
		if r.code != 0 {
			t.Fatalf("slipway %s failed with exit code %d", strings.Join(args, " "), r.code)
		}
		return r.duration
	}
	apply := func(m string) time.Duration { return timed("apply", "-m", m, "--auto-approve") }

	noPool := manifest("bench-nopool.yaml", "")
	row("apply, HA control plane with machine-controller and CCM, no pool", apply(noPool))
	row("reset of that cluster", timed("reset", "-m", noPool, "--auto-approve"))
	row("apply, HA control plane and a pool of 2 until both are Ready", apply(pool(2, "m1.small")))
	h.expectPool(t, cloud, "pool1", 2, current)
	lat := h.machineLatencies(t, nil)

	row("pool 2 → 0", apply(pool(0, "m1.small")))
	row("pool 0 → 3 until 3 Nodes are Ready", apply(pool(3, "m1.small")))
	h.expectPool(t, cloud, "pool1", 3, current)
	seen := map[string]bool{}
	for name := range lat {
		seen[name] = true
	}
	scale := h.machineLatencies(t, seen)
	for name := range scale {
		seen[name] = true
	}
	row("rolling update of 3 Machines (new flavor) until all are Ready", apply(pool(3, "m1.medium")))
	h.expectPool(t, cloud, "pool1", 3, current)
	roll := h.machineLatencies(t, seen)

	// The baseline: the same join without the cloud and the controller, by hand on a spare host.
	start := time.Now()
	h.joinWithUserData(t, h.kube("e2e"), noPool, "worker-1", current, false)
	raw := time.Since(start)

	t.Logf("load average at the end: %s", load())
	var b strings.Builder
	b.WriteString("\n| step | time |\n|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s |\n", r[0], r[1])
	}
	for _, set := range []struct {
		what string
		lat  map[string]time.Duration
	}{{"install (2)", lat}, {"0 → 3", scale}, {"rolling update (3)", roll}} {
		fmt.Fprintf(&b, "| Machine created → Node Ready, %s | %s |\n", set.what, latencies(set.lat))
	}
	fmt.Fprintf(&b, "| baseline: the same user-data by hand (config drive, cloud-init) → Node Ready | %.1f s |\n", raw.Seconds())
	t.Log(b.String())
}

// machineLatencies returns, for every Machine of pool1 not in skip, the time from its creation
// to its Node's Ready condition.
func (h *harness) machineLatencies(t *testing.T, skip map[string]bool) map[string]time.Duration {
	t.Helper()
	c := h.kube("e2e")
	out := map[string]time.Duration{}
	for _, m := range h.poolMachines(t, "pool1") {
		if skip[m.Name] || m.Status.NodeRef == nil {
			continue
		}
		n, err := c.CoreV1().Nodes().Get(context.Background(), m.Status.NodeRef.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				out[m.Name] = cond.LastTransitionTime.Sub(m.CreationTimestamp.Time)
			}
		}
	}
	return out
}

// latencies prints durations as "min–max (median m)", sorted.
func latencies(lat map[string]time.Duration) string {
	if len(lat) == 0 {
		return "none"
	}
	var ds []time.Duration
	for _, d := range lat {
		ds = append(ds, d)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return fmt.Sprintf("%.0f–%.0f s (median %.0f s, %d machines)", ds[0].Seconds(), ds[len(ds)-1].Seconds(), ds[len(ds)/2].Seconds(), len(ds))
}
