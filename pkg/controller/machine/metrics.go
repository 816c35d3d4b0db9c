package machine

import "github.com/prometheus/client_golang/prometheus"

// The Machine controller's metrics, beyond controller-runtime's own (which already count
// reconciles and reconcile errors per controller as controller_runtime_reconcile_errors_total).
var (
	provisioningSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "machine_controller_provisioning_duration_seconds",
		Help:    "Time from a Machine's creation until its Node is Ready.",
		Buckets: prometheus.ExponentialBuckets(5, 2, 10),
	})
	deprovisioningSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "machine_controller_deprovisioning_duration_seconds",
		Help:    "Time from a Machine's deletion request until its finalizer is removed.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 12),
	})
	reconcileErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "machine_controller_reconcile_errors_total",
		Help: "Reconcile errors by controller and step.",
	}, []string{"controller", "step"})
)

// Metrics returns the Machine controller's collectors, which the manager registers once per
// process.
func Metrics() []prometheus.Collector {
	return []prometheus.Collector{provisioningSeconds, deprovisioningSeconds, reconcileErrors}
}
