package openstack_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
)

// consoleOnly is a hypervisor whose machines only have a console: line i reads "line i".
type consoleOnly struct{}

func (consoleOnly) Spawn(context.Context, openstacktest.Machine) error             { return nil }
func (consoleOnly) Destroy(context.Context, string) error                          { return nil }
func (consoleOnly) Power(context.Context, string, openstacktest.PowerAction) error { return nil }
func (consoleOnly) SyncNetwork(context.Context, openstacktest.Topology) error      { return nil }
func (consoleOnly) Console(_ context.Context, _ string, lines int) (string, error) {
	var out []string
	for i := 1; i <= 50; i++ {
		out = append(out, fmt.Sprintf("line %d", i))
	}
	if lines > 0 {
		out = out[len(out)-lines:]
	}
	return strings.Join(out, "\n"), nil
}

func TestConsole(t *testing.T) {
	sim := newSim(t, openstacktest.Options{Hypervisor: consoleOnly{}})
	p := newProvider(t, sim, openstack.Options{})
	ctx := context.Background()
	m := newMachine(t, spec(sim, nil))
	if _, err := p.Console(ctx, m, 20); err == nil || !strings.Contains(err.Error(), "no server yet") {
		t.Errorf("a Machine without a server: %v", err)
	}
	st := newStore(m)
	if _, err := p.Create(ctx, m, st.update, ""); err != nil {
		t.Fatal(err)
	}
	inst := waitRunning(t, p, st.machine())
	m = st.machine()
	m.Spec.ProviderID = &inst.ProviderID
	out, err := p.Console(ctx, m, 20)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(out, "\n"); len(lines) != 20 || lines[0] != "line 31" || lines[19] != "line 50" {
		t.Errorf("the last 20 lines: %q", out)
	}
	gone := "openstack:///00000000-0000-0000-0000-000000000000"
	m.Spec.ProviderID = &gone
	if _, err := p.Console(ctx, m, 20); err == nil || !strings.Contains(err.Error(), "reading the console log of server") {
		t.Errorf("a server that does not exist: %v", err)
	}
	deleteAll(t, p, st)
}
