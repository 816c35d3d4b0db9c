package integration_test

import (
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
)

// TestRegionIsTheMachines: the region and the availability zone say where in the operator's
// cloud a server goes, so a Machine author may write them. Admission accepts a Machine in a
// region the cloud's catalog does not have (admission never calls the cloud); the controller,
// which finds the region in its own Keystone catalog, fails the Machine with a condition that
// names the region and the catalog's regions, and creates nothing. A region of the catalog runs.
func TestRegionIsTheMachines(t *testing.T) {
	a := newAttack(t, nil)
	region := a.cloud.sim.Region()

	m := a.machine("elsewhere", map[string]any{"region": "RegionTwo", "availabilityZone": openstacktest.AvailabilityZone})
	if err := a.mallory.Create(a.ctx, m); err != nil {
		t.Fatalf("admission refused a region: %v", err)
	}
	why := `region "RegionTwo" is not in the service catalog of ` + a.cloud.sim.AuthURL() + `, which has regions "` + region + `"`
	a.failed(m, v1alpha1.InvalidConfigurationMachineError, why)
	waitCondition(a, m, v1alpha1.MachineValidated, why)
	if n := a.tokensOf(m); n != 0 {
		t.Fatalf("%d bootstrap tokens were made for the Machine", n)
	}
	if n := len(a.cloud.sim.Servers()); n != 0 {
		t.Fatalf("the cloud got %d servers", n)
	}
	a.deleted(m)

	m = a.machine("here", map[string]any{"region": region, "availabilityZone": openstacktest.AvailabilityZone})
	if err := a.mallory.Create(a.ctx, m); err != nil {
		t.Fatal(err)
	}
	waitRunningMachine(a, m)
	a.deleted(m)
}
