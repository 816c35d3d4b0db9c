package applied_test

import (
	"os"
	"testing"

	"github.com/slipway-dev/slipway/test/envtest"
)

// TestMain stops the kube-apiserver and etcd that the envtest tests share once they are done.
func TestMain(m *testing.M) { os.Exit(envtest.Main(m)) }
