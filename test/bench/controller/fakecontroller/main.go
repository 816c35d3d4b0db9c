// Command fakecontroller is the machine-controller wired to the in-memory cloud, for the
// benchmark: it runs as its own process so that its memory can be measured alone.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/slipway-dev/slipway/pkg/cloud/cloudtest"
	"github.com/slipway-dev/slipway/pkg/controller"
)

func main() {
	var o controller.Options
	var mo controller.ManagerOptions
	var qps float64
	flag.StringVar(&mo.MetricsAddr, "metrics-bind-address", "127.0.0.1:0", "metrics address")
	flag.Float64Var(&qps, "kube-api-qps", 20, "requests per second to the API server")
	flag.IntVar(&mo.Burst, "kube-api-burst", 40, "request burst")
	flag.IntVar(&o.Workers, "workers", 10, "concurrent reconciles per controller")
	flag.DurationVar(&o.PollInterval, "poll-interval", 5*time.Second, "cloud and drain poll interval")
	flag.StringVar(&o.Namespace, "namespace", "", "namespace to watch")
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.Level(zapErrorsOnly)))
	mo.QPS = float32(qps)
	mo.ProbeAddr = "0"
	// The benchmark reads the metrics over plain http on loopback; the machine-controller's own
	// default (https with authentication) made every reading an error page, counted as zero.
	mo.MetricsInsecure = true
	cfg, err := ctrl.GetConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	countRequests(cfg)
	ctx := ctrl.SetupSignalHandler()
	mgr, err := controller.NewManager(ctx, cfg, cloudtest.New(), o, mo)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := mgr.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
