package cloudtest

import (
	"context"
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
)

func machine(uid string) *v1alpha1.Machine {
	return &v1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m-" + uid, UID: types.UID(uid)}}
}

func TestProviderLifecycle(t *testing.T) {
	ctx := context.Background()
	p := New()
	m := machine("a")
	var recorded string
	update := func(_ context.Context, mutate func(*v1alpha1.Machine)) error {
		c := m.DeepCopy()
		mutate(c)
		recorded = c.Annotations[ServerIDAnnotation]
		return nil
	}
	if _, err := p.Get(ctx, m); !errors.Is(err, cloud.ErrInstanceNotFound) {
		t.Fatalf("Get before Create = %v, want ErrInstanceNotFound", err)
	}
	first, err := p.Create(ctx, m, update, "")
	if err != nil {
		t.Fatal(err)
	}
	if recorded != first.ID {
		t.Fatalf("update recorded %q, want %q", recorded, first.ID)
	}
	again, err := p.Create(ctx, m, update, "")
	if err != nil || again.ID != first.ID {
		t.Fatalf("second Create = %v, %v; want the same server %s", again, err, first.ID)
	}
	if c, _ := p.Counts(); c != 1 {
		t.Fatalf("creates = %d, want 1", c)
	}
	if first.State != cloud.StateRunning || len(first.Addresses) != 1 {
		t.Fatalf("server = %+v, want Running with one address", first)
	}
	if done, err := p.Delete(ctx, m, nil); err != nil || done {
		t.Fatalf("first Delete = %v, %v; want not done", done, err)
	}
	if done, err := p.Delete(ctx, m, nil); err != nil || !done {
		t.Fatalf("second Delete = %v, %v; want done", done, err)
	}
	if done, err := p.Delete(ctx, m, nil); err != nil || !done {
		t.Fatalf("Delete of a gone server = %v, %v; want done", done, err)
	}
}

func TestProviderFaults(t *testing.T) {
	ctx := context.Background()
	p := New()
	m := machine("b")
	if _, err := p.Create(ctx, m, nil, ""); err != nil {
		t.Fatal(err)
	}
	p.SetUnreachable(true)
	if _, err := p.Get(ctx, m); err == nil || errors.Is(err, cloud.ErrInstanceNotFound) {
		t.Fatalf("Get while unreachable = %v, want a non-NotFound error", err)
	}
	p.SetUnreachable(false)
	if err := p.SetDeleteStuck(m, true); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if done, _ := p.Delete(ctx, m, nil); done {
			t.Fatal("stuck Delete reported done")
		}
	}
	if err := p.RemoveOutOfBand(m); err != nil {
		t.Fatal(err)
	}
	if p.Len() != 0 {
		t.Fatalf("Len = %d after out-of-band removal", p.Len())
	}
	a, b := allocAddr(), allocAddr()
	if a == b {
		t.Fatalf("two allocations returned %s", a)
	}
}
