package controller

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/test/envtest"
)

func TestMain(m *testing.M) { os.Exit(envtest.Main(m)) }

// The controller's client rate limit and workers per controller in the benchmark, overridable
// with BENCH_QPS and BENCH_WORKERS (the flags' defaults are 20 and 10).
var (
	qps     = envInt("BENCH_QPS", 200)
	workers = envInt("BENCH_WORKERS", 10)
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func deployment(ns, name string, replicas int32) *v1alpha1.MachineDeployment {
	labels := map[string]string{"group": name}
	surge, unavail := intstr.FromInt32(1), intstr.FromInt32(0)
	return &v1alpha1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.MachineDeploymentSpec{
			Replicas: &replicas,
			Selector: metav1.LabelSelector{MatchLabels: labels},
			Strategy: &v1alpha1.MachineDeploymentStrategy{RollingUpdate: &v1alpha1.MachineRollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavail}},
			Template: v1alpha1.MachineTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: v1alpha1.MachineSpec{
				ProviderSpec: v1alpha1.ProviderSpec{Value: &runtime.RawExtension{Raw: []byte(
					`{"cloudProvider":"fake","cloudProviderSpec":{},"operatingSystem":"ubuntu"}`)}},
				Versions: v1alpha1.MachineVersionInfo{Kubelet: "1.36.3"},
			}},
		},
	}
}

func scale(b *testing.B, env *envtest.Env, md *v1alpha1.MachineDeployment, n int32) {
	s := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: md.Name, Namespace: md.Namespace}, Spec: autoscalingv1.ScaleSpec{Replicas: n}}
	if err := env.Client.SubResource("scale").Update(context.Background(), md, client.WithSubResourceBody(s)); err != nil {
		b.Fatalf("scaling %s to %d: %v", md.Name, n, err)
	}
}

// waitMachines waits until the namespace has exactly n Machines, all Running.
func waitMachines(b *testing.B, env *envtest.Env, ns string, n int) time.Duration {
	start := time.Now()
	envtest.Eventually(b, 30*time.Minute, fmt.Sprintf("%d running machines", n), func() (bool, string) {
		var list v1alpha1.MachineList
		if err := env.Client.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		running := 0
		for _, m := range list.Items {
			if m.Status.Phase == v1alpha1.MachinePhaseRunning {
				running++
			}
		}
		return len(list.Items) == n && running == n, fmt.Sprintf("%d machines, %d running", len(list.Items), running)
	})
	return time.Since(start)
}

// programs are the processes whose CPU time the benchmark reports besides its own.
var programs = []string{"kube-apiserver", "etcd", "fakecontroller"}

// BenchmarkScale500 scales one MachineDeployment 0→500→0.
func BenchmarkScale500(b *testing.B) {
	env := envtest.Get(b)
	for range b.N {
		ns := env.Namespace(b)
		env.StartKubelet(b, ns, nil)
		p := startController(b, env, ns, qps, workers)
		md := deployment(ns, "bench", 0)
		if err := env.Client.Create(context.Background(), md); err != nil {
			b.Fatal(err)
		}
		r0, _ := p.requests()
		c0, _ := cpuByProgram(programs...)
		start := time.Now()
		scale(b, env, md, 500)
		waitMachines(b, env, ns, 500)
		up := time.Since(start)
		r1, _ := p.requests()
		c1, _ := cpuByProgram(programs...)
		rss, peak, _ := p.memory()

		start = time.Now()
		scale(b, env, md, 0)
		waitMachines(b, env, ns, 0)
		down := time.Since(start)
		r2, _ := p.requests()
		c2, _ := cpuByProgram(programs...)
		rssAfter, peakAfter, _ := p.memory()

		b.ReportMetric(up.Seconds(), "s-scale-up")
		b.ReportMetric(down.Seconds(), "s-scale-down")
		b.ReportMetric((r1.total-r0.total)/500, "req/machine-up")
		b.ReportMetric((r2.total-r1.total)/500, "req/machine-down")
		b.ReportMetric(peakAfter, "MiB-peak-rss")
		fmt.Printf("qps %d, workers %d, GOMEMLIMIT %q\n", qps, workers, os.Getenv("BENCH_GOMEMLIMIT"))
		fmt.Printf("scale 0→500: %.1fs, %.1f API requests per machine; RSS at 500 machines %.0f MiB (peak %.0f)\n", up.Seconds(), (r1.total-r0.total)/500, rss, peak)
		fmt.Printf("scale 500→0: %.1fs, %.1f API requests per machine; RSS after %.0f MiB (peak %.0f)\n", down.Seconds(), (r2.total-r1.total)/500, rssAfter, peakAfter)
		fmt.Printf("CPU used, up: %s\n", cpuSpent(c0, c1, up.Seconds()))
		fmt.Printf("CPU used, down: %s\n", cpuSpent(c1, c2, down.Seconds()))
		fmt.Printf("requests per machine by method: up %s; down %s\n", perMachine(r0.byMethod, r1.byMethod, 500), perMachine(r1.byMethod, r2.byMethod, 500))
		fmt.Printf("requests per machine by verb and resource, up: %s\n", perMachine(r0.byVerb, r1.byVerb, 500))
		fmt.Printf("requests per machine by verb and resource, down: %s\n", perMachine(r1.byVerb, r2.byVerb, 500))
	}
}

// BenchmarkRSS5000 holds 5,000 Machines across 10 MachineDeployments and measures memory.
func BenchmarkRSS5000(b *testing.B) {
	env := envtest.Get(b)
	for range b.N {
		ns := env.Namespace(b)
		env.StartKubelet(b, ns, nil)
		p := startController(b, env, ns, qps, workers)
		start := time.Now()
		for i := range 10 {
			if err := env.Client.Create(context.Background(), deployment(ns, fmt.Sprintf("pool-%d", i), 500)); err != nil {
				b.Fatal(err)
			}
		}
		waitMachines(b, env, ns, 5000)
		took := time.Since(start)
		r, _ := p.requests()
		rss, peak, _ := p.memory()
		heap, _ := p.heap()
		anon, file, _ := p.split()
		b.ReportMetric(rss, "MiB-rss")
		b.ReportMetric(peak, "MiB-peak-rss")
		fmt.Printf("5000 machines in 10 deployments (qps %d, workers %d, GOMEMLIMIT %q): converged in %.0fs, %.1f API requests per machine; RSS %.0f MiB (peak %.0f; anonymous %.0f, file-backed %.0f), live heap %.0f MiB\n",
			qps, workers, os.Getenv("BENCH_GOMEMLIMIT"), took.Seconds(), r.total/5000, rss, peak, anon, file, heap)
	}
}
