package openstacktest_test

import (
	"context"
	"testing"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
)

// TestProjectClient authenticates over http and over https with the Sim's own CA, and gets a
// catalog with the Sim's endpoints either way.
func TestProjectClient(t *testing.T) {
	for name, sim := range map[string]*openstacktest.Sim{
		"http":  openstacktest.New(openstacktest.Options{}),
		"https": openstacktest.NewTLS(openstacktest.Options{}),
	} {
		t.Run(name, func(t *testing.T) {
			defer sim.Close()
			pc, err := sim.ProjectClient(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if pc.TokenID == "" {
				t.Error("authenticated without a token")
			}
		})
	}
}
