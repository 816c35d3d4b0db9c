package controller

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/controller/internal/machineutil"
	"github.com/slipway-dev/slipway/pkg/controller/machine"
)

// Metrics beyond controller-runtime's own (which already count reconciles and reconcile errors
// per controller as controller_runtime_reconcile_errors_total) are the Machine controller's
// (machine.Metrics), this gauge, which replacementFrozen keeps, and the Machines by phase.
var healthFrozen = prometheus.NewGauge(prometheus.GaugeOpts{
	Name: "machine_controller_health_replacement_frozen",
	Help: "1 while health-based replacement is frozen because the API server or the cloud is unreachable.",
})

// phaseCollector reports machines by phase at scrape time from the informer cache of the
// running manager, so that the numbers can never drift from the objects.
type phaseCollector struct {
	desc *prometheus.Desc
}

// phaseReader holds the client.Reader of the manager that runs now; tests start several.
var phaseReader atomic.Value

type readerBox struct{ client.Reader }

func (c *phaseCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *phaseCollector) Collect(ch chan<- prometheus.Metric) {
	box, ok := phaseReader.Load().(readerBox)
	if !ok {
		return
	}
	var list v1alpha1.MachineList
	if err := box.List(context.Background(), &list); err != nil {
		return
	}
	counts := map[v1alpha1.MachinePhase]int{}
	for _, p := range []v1alpha1.MachinePhase{v1alpha1.MachinePhasePending, v1alpha1.MachinePhaseProvisioning,
		v1alpha1.MachinePhaseProvisioned, v1alpha1.MachinePhaseJoining, v1alpha1.MachinePhaseRunning,
		v1alpha1.MachinePhaseDeleting, v1alpha1.MachinePhaseFailed} {
		counts[p] = 0
	}
	for i := range list.Items {
		counts[machineutil.PhaseOrPending(list.Items[i].Status.Phase)]++
	}
	for p, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), string(p))
	}
}

var registerOnce sync.Once

// registerMetrics points the phase collector at reader and registers the collectors with
// controller-runtime's registry once per process.
func registerMetrics(reader client.Reader) {
	phaseReader.Store(readerBox{reader})
	registerOnce.Do(func() {
		metrics.Registry.MustRegister(append(machine.Metrics(), healthFrozen,
			&phaseCollector{desc: prometheus.NewDesc("machine_controller_machines", "Machines by phase.", []string{"phase"}, nil)})...)
	})
}

// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// metricsOptions serves metrics behind the API server's authentication and authorization
// (TokenReview and SubjectAccessReview of GET /metrics, metricsauth.go), unless mo.MetricsInsecure: the
// metrics name Machines, Nodes and cloud errors, which is more than anyone who can reach the
// pod should read.
func metricsOptions(mo ManagerOptions) metricsserver.Options {
	o := metricsserver.Options{BindAddress: mo.MetricsAddr}
	if !mo.MetricsInsecure {
		o.SecureServing, o.FilterProvider, o.CertDir = true, metricsFilter, mo.MetricsCertDir
	}
	return o
}
