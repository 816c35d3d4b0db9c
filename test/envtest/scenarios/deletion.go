package scenarios

import (
	"errors"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
	"github.com/slipway-dev/slipway/test/envtest"
)

// DeletionPolicies deletes one Machine with each policy. graceful evicts the Node's pods first;
// unsafe evicts nothing; forced lets the Machine go although the cloud cannot delete its server,
// records the leftover, and the orphan sweep deletes the server once the cloud can.
func DeletionPolicies(t *testing.T, env *envtest.Env, newCloud NewCloud) {
	f := setup(t, env, newCloud, nil)
	f.create(f.deployment("policies", 3, intstr.FromInt32(1), intstr.FromInt32(0)))
	ms := f.waitRunning(3)
	pods := make([]*corev1.Pod, 3)
	for i := range ms {
		pods[i] = f.runPod(fmt.Sprintf("work-%d", i), ms[i].Status.NodeRef.Name, map[string]string{"app": "work"}, nil, false)
	}

	t.Run("graceful", func(t *testing.T) {
		f.deleteWithPolicy(&ms[0], "")
		f.waitGone(&ms[0])
		if env.Get(t, pods[0]) {
			t.Errorf("pod %s survived a graceful deletion of its machine", pods[0].Name)
		}
	})
	t.Run("unsafe", func(t *testing.T) {
		f.deleteWithPolicy(&ms[1], v1alpha1.DeletionPolicyUnsafe)
		f.waitGone(&ms[1])
		if !env.Get(t, pods[1]) || !pods[1].DeletionTimestamp.IsZero() {
			t.Errorf("pod %s was evicted although the deletion policy was unsafe", pods[1].Name)
		}
	})
	t.Run("forced", func(t *testing.T) {
		if err := f.cloud.SetDeleteStuck(&ms[2], true); err != nil {
			t.Fatal(err)
		}
		f.deleteWithPolicy(&ms[2], v1alpha1.DeletionPolicyForced)
		f.waitGone(&ms[2])
		if _, err := f.cloud.Get(f.ctx, &ms[2]); err != nil {
			t.Fatalf("the stuck server is already gone (%v); the forced deletion did not outpace the cloud", err)
		}
		left, err := f.leftoverRecord()
		if err != nil {
			t.Fatalf("reading the leftover record: %v", err)
		}
		if _, ok := left[string(ms[2].UID)]; !ok {
			t.Fatalf("the leftover server of machine %s is not recorded: %v", ms[2].Name, left)
		}
		if err := f.cloud.SetDeleteStuck(&ms[2], false); err != nil {
			t.Fatal(err)
		}
		envtest.Eventually(t, wait, "the orphan sweep deletes the leftover server", func() (bool, string) {
			_, err := f.cloud.Get(f.ctx, &ms[2])
			if l, lerr := f.leftoverRecord(); lerr == nil {
				left = l
			}
			_, recorded := left[string(ms[2].UID)]
			return errors.Is(err, cloud.ErrInstanceNotFound) && !recorded, fmt.Sprintf("server err=%v, still recorded=%t", err, recorded)
		})
	})
	f.waitRunning(3)
}

func (f *fixture) deleteWithPolicy(m *v1alpha1.Machine, policy string) {
	f.t.Helper()
	if policy != "" {
		f.update(m, func() {
			if m.Annotations == nil {
				m.Annotations = map[string]string{}
			}
			m.Annotations[v1alpha1.DeletionPolicyAnnotation] = policy
		})
	}
	if err := f.env.Client.Delete(f.ctx, m); err != nil {
		f.t.Fatalf("deleting machine %s: %v", m.Name, err)
	}
}

// leftoverRecord reads the machine-controller's record of servers left behind, by Machine UID.
func (f *fixture) leftoverRecord() (map[string]string, error) {
	cm := &corev1.ConfigMap{}
	err := f.env.Client.Get(f.ctx, client.ObjectKey{Namespace: f.opts.LeftoverNamespace, Name: "machine-controller-leftovers"}, cm)
	return cm.Data, err
}

func (f *fixture) waitGone(obj client.Object) {
	f.t.Helper()
	envtest.Eventually(f.t, wait, fmt.Sprintf("%s gone", obj.GetName()), func() (bool, string) {
		return !f.env.Get(f.t, obj), "still exists"
	})
}
