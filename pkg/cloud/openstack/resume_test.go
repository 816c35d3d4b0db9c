package openstack_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
)

// TestResumedCreate kills the controller after each write of a create (the write fails, as if
// the process died right after sending the request before it), then lets a fresh provider (a
// restarted controller, with no memory) resume from what the Machine records. Whatever the
// moment of the crash, the machine ends with exactly one server, port and floating IP, and a
// delete leaves nothing behind.
func TestResumedCreate(t *testing.T) {
	sim := newSim(t, openstacktest.Options{})
	ctx := context.Background()
	// With a floating IP a create writes four times: intent for port and floating IP, their IDs,
	// intent for the server, its ID.
	for crashAfter := 0; crashAfter < 4; crashAfter++ {
		t.Run("", func(t *testing.T) {
			m := newMachine(t, spec(sim, map[string]any{"floatingIpPool": "public"}))
			st := newStore(m)
			st.failing, st.failAfter = true, crashAfter
			first := newProvider(t, sim, openstack.Options{})
			if _, err := first.Create(ctx, m, st.update, ""); !errors.Is(err, errCrash) {
				t.Fatalf("crash after write %d: want the simulated crash, got %v", crashAfter, err)
			}
			st.failing = false
			restarted := newProvider(t, sim, openstack.Options{})
			if _, err := restarted.Create(ctx, st.machine(), st.update, ""); err != nil {
				t.Fatalf("resumed create: %v", err)
			}
			if s, p, f := len(sim.Servers()), len(sim.Ports()), len(sim.FloatingIPs()); s != 1 || p != 1 || f != 1 {
				t.Fatalf("after a crash at write %d: %d servers, %d ports, %d floating IPs; want one each", crashAfter, s, p, f)
			}
			waitRunning(t, restarted, st.machine())
			deleteAll(t, newProvider(t, sim, openstack.Options{}), st)
			assertEmpty(t, sim)
		})
	}
}

// TestStaleMachineDoesNotDuplicate: the controller may hand the provider a Machine from a cache
// that has not seen the provider's last write. The provider's own memory prevents a duplicate.
func TestStaleMachineDoesNotDuplicate(t *testing.T) {
	sim := newSim(t, openstacktest.Options{})
	p := newProvider(t, sim, openstack.Options{})
	ctx := context.Background()
	m := newMachine(t, spec(sim, nil))
	st := newStore(m)
	stale := m.DeepCopy()
	first, err := p.Create(ctx, m, st.update, "")
	if err != nil {
		t.Fatal(err)
	}
	inst, err := p.Get(ctx, stale)
	if err != nil || inst.ID != first.ID {
		t.Fatalf("Get with a stale Machine: %+v, %v", inst, err)
	}
	if again, err := p.Create(ctx, stale, st.update, ""); err != nil || again.ID != first.ID {
		t.Fatalf("Create with a stale Machine: %+v, %v", again, err)
	}
	if n := len(sim.Servers()); n != 1 {
		t.Fatalf("%d servers, want 1", n)
	}
}

// TestErrorServerIsReplaced: a server that goes to ERROR is deleted and replaced after a backoff,
// and the fault reaches the caller; after MaxCreateAttempts the Machine fails with the fault.
func TestErrorServerIsReplaced(t *testing.T) {
	sim := newSim(t, openstacktest.Options{})
	p := newProvider(t, sim, openstack.Options{MaxCreateAttempts: 2, ErrorBackoff: 50 * time.Millisecond})
	ctx := context.Background()
	m := newMachine(t, spec(sim, map[string]any{"subnet": "private-subnet"}))
	st := newStore(m)
	const fault = "No valid host was found. There are not enough hosts available."
	sim.FailNextServers(1, fault)
	if _, err := p.Create(ctx, m, st.update, ""); err != nil {
		t.Fatal(err)
	}
	var inst *cloud.Instance
	poll(t, "ERROR", func() bool {
		inst, _ = p.Get(ctx, st.machine())
		return inst != nil && inst.State == cloud.StateError
	})
	if inst.Fault != fault {
		t.Fatalf("fault %q", inst.Fault)
	}
	_, err := p.Create(ctx, st.machine(), st.update, "")
	if err == nil || !strings.Contains(err.Error(), fault) {
		t.Fatalf("replacing: want an error with the fault, got %v", err)
	}
	// Until the successor is made, Get keeps reporting the failure so the controller calls Create.
	if inst, err := p.Get(ctx, st.machine()); err != nil || inst.State != cloud.StateError || inst.Fault != fault {
		t.Fatalf("Get while replacing: %+v, %v", inst, err)
	}
	if _, err := p.Create(ctx, st.machine(), st.update, ""); err == nil || !strings.Contains(err.Error(), "after") {
		t.Fatalf("within the backoff: want a wait, got %v", err)
	}
	time.Sleep(60 * time.Millisecond)
	second, err := p.Create(ctx, st.machine(), st.update, "")
	if err != nil {
		t.Fatalf("replacement: %v", err)
	}
	waitRunning(t, p, st.machine())
	if n, ports := len(sim.Servers()), sim.Ports(); n != 1 || len(ports) != 1 || ports[0].DeviceID != second.ID {
		t.Fatalf("%d servers, ports %+v: the replacement must reuse the port", n, ports)
	}

	// Second machine: every server fails, so the limit is reached.
	m2 := newMachine(t, spec(sim, nil))
	st2 := newStore(m2)
	sim.FailNextServers(2, fault)
	var last error
	poll(t, "terminal failure", func() bool {
		inst, err := p.Get(ctx, st2.machine())
		if errors.Is(err, cloud.ErrInstanceNotFound) || err == nil && inst.State == cloud.StateError {
			_, last = p.Create(ctx, st2.machine(), st2.update, "")
		}
		_, terminal := cloud.AsTerminal(last)
		return terminal
	})
	te := mustTerminal(t, last, v1alpha1.CreateMachineError)
	if !strings.Contains(te.Message, fault) {
		t.Fatalf("terminal message %q lacks the fault", te.Message)
	}
	deleteAll(t, p, st)
	deleteAll(t, p, st2)
	assertEmpty(t, sim)
}

// TestServerDeletedBehindOurBack: Get reports the server gone; Delete still releases the rest.
func TestServerDeletedBehindOurBack(t *testing.T) {
	sim := newSim(t, openstacktest.Options{})
	p := newProvider(t, sim, openstack.Options{})
	ctx := context.Background()
	m := newMachine(t, spec(sim, map[string]any{"floatingIpPool": "public"}))
	st := newStore(m)
	inst, err := p.Create(ctx, m, st.update, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.VanishServer(inst.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Get(ctx, st.machine()); !errors.Is(err, cloud.ErrInstanceNotFound) {
		t.Fatalf("Get after the server vanished: %v", err)
	}
	deleteAll(t, p, st)
	assertEmpty(t, sim)
}
