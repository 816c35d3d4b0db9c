package controller_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/cloud/cloudtest"
	"github.com/slipway-dev/slipway/pkg/controller"
	"github.com/slipway-dev/slipway/test/envtest"
)

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestOperations checks what an operator relies on: /healthz and /readyz answer, the Prometheus
// endpoint serves the controller's metrics, and the leader holds a Lease in kube-system.
func TestOperations(t *testing.T) {
	env := envtest.Get(t)
	ns := env.Namespace(t)
	metrics, probes := freeAddr(t), freeAddr(t)
	id := "machine-controller-" + ns
	env.StartManager(t, cloudtest.New(), envtest.TestOptions(ns), controller.ManagerOptions{
		MetricsAddr: metrics, ProbeAddr: probes, LeaderElection: true, LeaderElectionNamespace: "kube-system", LeaderElectionID: id})
	get := func(url string) (int, string) {
		resp, err := http.Get(url)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		envtest.Eventually(t, time.Minute, path, func() (bool, string) {
			code, body := get("http://" + probes + path)
			return code == http.StatusOK, fmt.Sprintf("%d %s", code, body)
		})
	}
	envtest.Eventually(t, time.Minute, "machine metrics", func() (bool, string) {
		_, body := get("http://" + metrics + "/metrics")
		for _, want := range []string{"machine_controller_machines{phase=\"Running\"}", "controller_runtime_reconcile_total"} {
			if !strings.Contains(body, want) {
				return false, "missing " + want
			}
		}
		return true, ""
	})
	envtest.Eventually(t, time.Minute, "the leader Lease", func() (bool, string) {
		lease := &coordinationv1.Lease{}
		err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: "kube-system", Name: id}, lease)
		return err == nil && lease.Spec.HolderIdentity != nil, fmt.Sprint(err)
	})
}
