package scenarios

import (
	"fmt"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/test/envtest"
)

// TokensAfterRestart has the controller restart after it made a Machine's server, with a
// bootstrap token in its user-data, and before the Node joined. The new controller, which may
// not read Secrets in kube-system and remembers nothing, deletes the token once the Node joins,
// by the name and UID the Machine records.
func TokensAfterRestart(t *testing.T, env *envtest.Env, newCloud NewCloud) {
	var hold atomic.Bool
	hold.Store(true)
	f := setup(t, env, newCloud, nil, envtest.NeverJoin(func(*v1alpha1.Machine) bool { return hold.Load() }))
	f.create(f.deployment("tokens", 1, intstr.FromInt32(1), intstr.FromInt32(0)))
	m := f.heldMachine()
	f.restart(f.mo)
	f.joinHeld(&m, &hold)
}

// heldMachine waits for the scenario's one Machine to have a server, made with one bootstrap
// token, while the kubelet holds back its Node.
func (f *fixture) heldMachine() v1alpha1.Machine {
	f.t.Helper()
	var m v1alpha1.Machine
	envtest.Eventually(f.t, wait, "a server made with a bootstrap token", func() (bool, string) {
		ms := f.machines()
		if len(ms) != 1 {
			return false, fmt.Sprintf("%d machines", len(ms))
		}
		m = ms[0]
		n := f.tokensOf(&m)
		return m.Spec.ProviderID != nil && n == 1, fmt.Sprintf("provider ID %v, %d tokens", m.Spec.ProviderID, n)
	})
	return m
}

// joinHeld lets m's Node join (hold false) and waits until the controller deleted m's
// bootstrap tokens.
func (f *fixture) joinHeld(m *v1alpha1.Machine, hold *atomic.Bool) {
	f.t.Helper()
	hold.Store(false)
	// The kubelet registers a Node when it sees the Machine change.
	poke := client.MergeFrom(m.DeepCopy())
	m.Annotations["scenarios.slipway.dev/poke"] = "1"
	if err := f.env.Client.Patch(f.ctx, m, poke); err != nil {
		f.t.Fatal(err)
	}
	f.waitRunning(1)
	envtest.Eventually(f.t, wait, "the bootstrap token deleted", func() (bool, string) {
		n := f.tokensOf(m)
		return n == 0, fmt.Sprintf("%d tokens", n)
	})
}

// tokensOf counts the bootstrap token Secrets in kube-system made for m.
func (f *fixture) tokensOf(m *v1alpha1.Machine) int {
	f.t.Helper()
	var list corev1.SecretList
	if err := f.env.Client.List(f.ctx, &list, client.InNamespace("kube-system"),
		client.MatchingLabels{"cluster.k8s.io/machine-uid": string(m.UID)}); err != nil {
		f.t.Fatal(err)
	}
	return len(list.Items)
}
