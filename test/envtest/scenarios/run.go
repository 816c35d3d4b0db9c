package scenarios

import (
	"testing"

	"github.com/slipway-dev/slipway/test/envtest"
)

// All lists every scenario by name.
var All = []struct {
	Name string
	Run  func(t *testing.T, env *envtest.Env, newCloud NewCloud)
}{
	{"ScaleUpDown", ScaleUpDown},
	{"AddressFallback", AddressFallback},
	{"RolloutSurge", RolloutSurge},
	{"RolloutUnavailable", RolloutUnavailable},
	{"DrainBlockedByPDB", DrainBlockedByPDB},
	{"OutOfBandDeletion", OutOfBandDeletion},
	{"NodeNeverJoins", NodeNeverJoins},
	{"RestartMidRollout", RestartMidRollout},
	{"DeletionPolicies", DeletionPolicies},
	{"OvershootFreeze", OvershootFreeze},
	{"DeletedDuringCreate", DeletedDuringCreate},
	{"MaintenanceAndAbort", MaintenanceAndAbort},
	{"HealthLimits", HealthLimits},
	{"CSRApproval", CSRApproval},
	{"PauseMinReadyDeadline", PauseMinReadyDeadline},
	{"NodeSettings", NodeSettings},
	{"NodeCredentials", NodeCredentials},
	{"TokensAfterRestart", TokensAfterRestart},
	{"QuotaWait", QuotaWait},
	{"APIServerNotReady", APIServerNotReady},
	{"InPlace", InPlace},
	{"ScaleFromZero", ScaleFromZero},
}

// Run runs every scenario against clouds from newCloud, one after another (the controllers of
// two scenarios would compete for Nodes).
func Run(t *testing.T, newCloud NewCloud) {
	env := envtest.Get(t)
	for _, s := range All {
		t.Run(s.Name, func(t *testing.T) { s.Run(t, env, newCloud) })
	}
}
