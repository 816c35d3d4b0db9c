package scenarios

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
	"github.com/slipway-dev/slipway/test/envtest"
)

// DeletedDuringCreate removes a Machine while its server is being created, with the result of a
// deletion that raced the finalizer: the API server decides whether to wait for finalizers when
// a delete begins, so a delete that began just before the controller added its finalizer removes
// the Machine outright, and the Machine's delete path never runs. Whatever the create allocated
// must still be released (the controller is confined to a namespace here, so the orphan sweep
// may not judge unrecorded servers), and the set replaces the Machine.
func DeletedDuringCreate(t *testing.T, env *envtest.Env, newCloud NewCloud) {
	v := &vanishingCloud{env: env}
	f := setup(t, env, func(t *testing.T) Cloud { v.Cloud = newCloud(t); return v }, nil)
	f.create(f.deployment("vanish", 1, intstr.FromInt32(1), intstr.FromInt32(0)))
	running := f.waitRunning(1)
	victim := v.victim()
	if victim == nil {
		t.Fatal("no Machine went through Create")
	}
	if running[0].UID == victim.UID {
		t.Fatalf("machine %s is running although it was deleted during its create", victim.Name)
	}
	envtest.Eventually(t, wait, "the vanished machine's server released", func() (bool, string) {
		return f.cloud.Len() == 1, fmt.Sprintf("%d servers for 1 machine", f.cloud.Len())
	})
	f.expectEvent(victim, "ServerLeftBehind")
	envtest.Eventually(t, wait, "the leftover record forgotten once released", func() (bool, string) {
		left, err := f.leftoverRecord()
		if err != nil {
			return client.IgnoreNotFound(err) == nil, err.Error()
		}
		_, held := left[string(victim.UID)]
		return !held, fmt.Sprintf("record of %s still held", victim.UID)
	})
}

// vanishingCloud deletes the first Machine it is asked to create a server for, with its
// finalizer removed first, then lets the create go on with the copy the controller holds.
type vanishingCloud struct {
	Cloud
	env *envtest.Env

	mu   sync.Mutex
	gone *v1alpha1.Machine
}

func (v *vanishingCloud) Create(ctx context.Context, m *v1alpha1.Machine, update cloud.MachineUpdater, userdata string) (*cloud.Instance, error) {
	v.mu.Lock()
	first := v.gone == nil
	if first {
		v.gone = m.DeepCopy()
	}
	v.mu.Unlock()
	if first {
		cur := m.DeepCopy()
		patch := client.MergeFrom(cur.DeepCopy())
		cur.Finalizers = nil
		if err := v.env.Client.Patch(ctx, cur, patch); err != nil {
			return nil, fmt.Errorf("test: removing the finalizer of %s: %w", m.Name, err)
		}
		if err := v.env.Client.Delete(ctx, cur, client.Preconditions{UID: &m.UID}); err != nil {
			return nil, fmt.Errorf("test: deleting %s: %w", m.Name, err)
		}
	}
	return v.Cloud.Create(ctx, m, update, userdata)
}

func (v *vanishingCloud) victim() *v1alpha1.Machine {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.gone
}
