package integration_test

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/test/envtest"
	"github.com/slipway-dev/slipway/test/envtest/scenarios"
)

func TestMain(m *testing.M) { os.Exit(envtest.Main(m)) }

// TestScenarios runs every controller scenario with the OpenStack provider on a simulator that
// answers each call after 20 ms. After each scenario the cloud must be empty: the scenario's
// cleanup deletes every MachineDeployment and Machine through a running controller and fails
// the scenario if a server, port, floating IP or volume is left (simCloud is a
// scenarios.Leaker).
//
// The scenarios hand one provider to the controller, to their fake kubelet and to their own
// checks, so errors injected into it would fail the observers rather than test the controller;
// injected errors are therefore off by default here (SLIPWAY_SIM_ERROR_RATE sets a rate) and on
// in TestScaleRolloutScaleToZero, whose observers use a provider the faults spare.
func TestScenarios(t *testing.T) {
	rate := 0.0
	if v := os.Getenv("SLIPWAY_SIM_ERROR_RATE"); v != "" {
		var err error
		if rate, err = strconv.ParseFloat(v, 64); err != nil {
			t.Fatalf("SLIPWAY_SIM_ERROR_RATE: %v", err)
		}
	}
	scenarios.Run(t, func(t *testing.T) scenarios.Cloud {
		return newSimCloud(t, cloudOptions{errorRate: rate, latency: 20 * time.Millisecond, buildTime: 200 * time.Millisecond})
	})
}
