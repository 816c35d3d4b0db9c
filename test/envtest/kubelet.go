package envtest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
)

// Kubelet plays the kubelets of a namespace's Machines, since envtest runs none: when a
// Machine's server runs, it registers a Node with the server's provider ID and addresses and the
// not-ready taint (as pkg/bootstrap's kubeadm join does), and reports it Ready; and it finishes
// pod terminations, which a real kubelet would confirm.
type Kubelet struct {
	env    *Env
	ns     string
	cloud  cloud.Provider
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	nodes map[string]string // Machine UID → Node name
	// NeverJoin, when set, keeps the Node of matching Machines from registering.
	neverJoin func(m *v1alpha1.Machine) bool
	// WithoutProviderID registers Nodes without spec.providerID, as kubelets without a cloud
	// provider do, so the controller must match them by address.
	withoutProviderID bool
}

// KubeletOption changes how the Kubelet behaves.
type KubeletOption func(*Kubelet)

// NeverJoin keeps the Nodes of matching Machines from ever registering.
func NeverJoin(f func(m *v1alpha1.Machine) bool) KubeletOption {
	return func(k *Kubelet) { k.neverJoin = f }
}

// WithoutProviderID registers Nodes without a provider ID.
func WithoutProviderID() KubeletOption { return func(k *Kubelet) { k.withoutProviderID = true } }

// StartKubelet plays the kubelets of namespace ns until the test ends. provider may be nil; the
// Kubelet then takes provider IDs and addresses from the Machines.
func (e *Env) StartKubelet(t testing.TB, ns string, provider cloud.Provider, opts ...KubeletOption) *Kubelet {
	ctx, cancel := context.WithCancel(context.Background())
	k := &Kubelet{env: e, ns: ns, cloud: provider, cancel: cancel, nodes: map[string]string{}}
	for _, o := range opts {
		o(k)
	}
	k.wg.Add(2)
	// Nodes register concurrently, as real kubelets do; one at a time would make the test's
	// kubelet the bottleneck when hundreds of Machines come up together.
	sem := make(chan struct{}, 16)
	go k.loop(ctx, &v1alpha1.MachineList{}, func(o client.Object) {
		m := o.(*v1alpha1.Machine)
		if !k.claim(m) {
			return
		}
		sem <- struct{}{}
		k.wg.Add(1)
		go func() {
			defer func() { <-sem; k.wg.Done() }()
			k.machine(ctx, t, m)
		}()
	})
	go k.loop(ctx, &corev1.PodList{}, func(o client.Object) { k.pod(ctx, t, o.(*corev1.Pod)) })
	t.Cleanup(func() { cancel(); k.wg.Wait() })
	return k
}

// loop lists and watches a kind in the namespace, re-watching whenever the watch ends.
func (k *Kubelet) loop(ctx context.Context, list client.ObjectList, handle func(client.Object)) {
	defer k.wg.Done()
	for ctx.Err() == nil {
		w, err := k.env.Client.Watch(ctx, list, client.InNamespace(k.ns))
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		for ev := range w.ResultChan() {
			if ev.Type == watch.Added || ev.Type == watch.Modified {
				if o, ok := ev.Object.(client.Object); ok {
					handle(o)
				}
			}
		}
		w.Stop()
	}
}

// Resync looks at every Machine again; a test calls it after changing the cloud behind the
// Kubelet's back.
func (k *Kubelet) Resync(t testing.TB) {
	var list v1alpha1.MachineList
	if err := k.env.Client.List(context.Background(), &list, client.InNamespace(k.ns)); err != nil {
		t.Errorf("kubelet: listing machines: %v", err)
		return
	}
	for i := range list.Items {
		if k.claim(&list.Items[i]) {
			k.machine(context.Background(), t, &list.Items[i])
		}
	}
}

// machine registers the Node of a claimed Machine whose server runs.
func (k *Kubelet) machine(ctx context.Context, t testing.TB, m *v1alpha1.Machine) {
	inst, ok := k.instance(ctx, m)
	if !ok {
		k.release(m)
		return
	}
	name := fmt.Sprintf("%s-%s", m.Name, string(m.UID)[:8])
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
		Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: v1alpha1.NotReadyTaintKey, Effect: corev1.TaintEffectNoSchedule}}},
	}
	if !k.withoutProviderID {
		node.Spec.ProviderID = inst.ProviderID
	}
	if err := k.env.Client.Create(ctx, node); err != nil && !apierrors.IsAlreadyExists(err) {
		if ctx.Err() == nil {
			t.Errorf("kubelet: registering node %s: %v", name, err)
		}
		k.release(m)
		return
	}
	status := corev1.NodeStatus{
		Addresses:  append([]corev1.NodeAddress{{Type: corev1.NodeHostName, Address: name}}, inst.Addresses...),
		Conditions: []corev1.NodeCondition{readyCondition(true)},
		NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v" + trimV(m.Spec.Versions.Kubelet)},
	}
	// The controller may already have annotated the new Node; report status on its latest version.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := k.env.Client.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
			return err
		}
		node.Status = status
		return k.env.Client.Status().Update(ctx, node)
	})
	if err != nil {
		if ctx.Err() == nil && !(apierrors.IsNotFound(err) && k.machineGoing(m)) {
			t.Errorf("kubelet: reporting status of node %s: %v", name, err)
		}
		k.release(m)
		return
	}
	k.mu.Lock()
	k.nodes[string(m.UID)] = name
	k.mu.Unlock()
}

// machineGoing reports whether m is gone or being deleted: then the controller may delete its
// Node while the Kubelet registers it, as it would under a real kubelet, which logs and stops.
func (k *Kubelet) machineGoing(m *v1alpha1.Machine) bool {
	cur := &v1alpha1.Machine{}
	err := k.env.Client.Get(context.Background(), client.ObjectKeyFromObject(m), cur)
	return apierrors.IsNotFound(err) || (err == nil && (!cur.DeletionTimestamp.IsZero() || cur.UID != m.UID))
}

// claim reports whether the Machine may get a Node now: it has a server, is not kept from
// joining, and no Node is registered or being registered for it. A claimed Machine is
// registered or released.
func (k *Kubelet) claim(m *v1alpha1.Machine) bool {
	if m.Spec.ProviderID == nil || (k.neverJoin != nil && k.neverJoin(m)) {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, busy := k.nodes[string(m.UID)]; busy {
		return false
	}
	k.nodes[string(m.UID)] = ""
	return true
}

// release forgets a claim whose registration did not happen, so a later event retries.
func (k *Kubelet) release(m *v1alpha1.Machine) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.nodes[string(m.UID)] == "" {
		delete(k.nodes, string(m.UID))
	}
}

// instance returns the Machine's running server: from the cloud, or when the Kubelet has no
// cloud (the cloud lives in another process, as in the benchmark) from what the controller
// recorded on the Machine.
func (k *Kubelet) instance(ctx context.Context, m *v1alpha1.Machine) (*cloud.Instance, bool) {
	if k.cloud == nil {
		if len(m.Status.Addresses) == 0 {
			return nil, false
		}
		return &cloud.Instance{ProviderID: *m.Spec.ProviderID, Addresses: m.Status.Addresses, State: cloud.StateRunning}, true
	}
	inst, err := k.cloud.Get(ctx, m)
	return inst, err == nil && inst.State == cloud.StateRunning
}

// pod confirms the termination of an evicted pod, as its kubelet would after stopping it.
func (k *Kubelet) pod(ctx context.Context, t testing.TB, p *corev1.Pod) {
	if p.DeletionTimestamp.IsZero() {
		return
	}
	err := k.env.Client.Delete(ctx, p, client.GracePeriodSeconds(0))
	if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
		t.Errorf("kubelet: finishing termination of pod %s: %v", p.Name, err)
	}
}

// Node returns the name of the Machine's Node, or "".
func (k *Kubelet) Node(m *v1alpha1.Machine) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.nodes[string(m.UID)]
}

// SetReady reports the Node Ready or NotReady, as its kubelet (or the node lifecycle
// controller, when the kubelet went silent) would.
func (k *Kubelet) SetReady(t testing.TB, nodeName string, ready bool) {
	t.Helper()
	ctx := context.Background()
	node := &corev1.Node{}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := k.env.Client.Get(ctx, client.ObjectKey{Name: nodeName}, node); err != nil {
			return err
		}
		for i := range node.Status.Conditions {
			if node.Status.Conditions[i].Type == corev1.NodeReady {
				node.Status.Conditions[i] = readyCondition(ready)
			}
		}
		return k.env.Client.Status().Update(ctx, node)
	})
	if err != nil {
		t.Fatalf("setting node %s ready=%t: %v", nodeName, ready, err)
	}
}

func readyCondition(ready bool) corev1.NodeCondition {
	c := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		Message: "kubelet is posting ready status", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}
	if !ready {
		c.Status, c.Reason, c.Message = corev1.ConditionFalse, "KubeletNotReady", "container runtime network not ready"
	}
	return c
}

func trimV(s string) string {
	if len(s) > 0 && s[0] == 'v' {
		return s[1:]
	}
	return s
}
