package controller_test

import (
	"os"
	"testing"

	"github.com/slipway-dev/slipway/pkg/cloud/cloudtest"
	"github.com/slipway-dev/slipway/test/envtest"
	"github.com/slipway-dev/slipway/test/envtest/scenarios"
)

func TestMain(m *testing.M) { os.Exit(envtest.Main(m)) }

// TestScenarios runs every scenario against the in-memory cloud and a real kube-apiserver.
func TestScenarios(t *testing.T) {
	scenarios.Run(t, func(*testing.T) scenarios.Cloud { return cloudtest.New() })
}
