package scripts_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/scripts"
	"github.com/slipway-dev/slipway/test/golden"
)

// checkScript compares a rendered script with testdata/<name>.golden (rewritten under -update)
// and checks that bash can parse it.
func checkScript(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name+".golden"), []byte(got))
	cmd := exec.Command("bash", "-n")
	cmd.Stdin = strings.NewReader(got)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("bash -n rejects %s: %v\n%s", name, err, out)
	}
}

func TestProbeGolden(t *testing.T) {
	checkScript(t, "probe", scripts.Probe())
}

func TestApplyLockGolden(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	for _, p := range []scripts.LockParams{
		{Op: scripts.LockAcquire, Token: token, Owner: "ops@laptop pid 42 since 2025-01-02T03:04:05Z", Local: "boot=b pidns=pid:[4026531836] pid=42 start=1234"},
		{Op: scripts.LockTakeover, Token: token, Owner: "ops@laptop pid 42", Local: "x", Expect: "fedcba9876543210fedcba9876543210", ExpectMTime: 1700000000},
		{Op: scripts.LockRefresh, Token: token},
		{Op: scripts.LockRelease, Token: token},
	} {
		s, err := scripts.ApplyLock(p)
		if err != nil {
			t.Fatal(err)
		}
		checkScript(t, "apply-lock-"+p.Op, s)
	}
}
