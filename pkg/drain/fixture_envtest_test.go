package drain_test

import (
	"context"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/slipway-dev/slipway/pkg/drain"
	"github.com/slipway-dev/slipway/test/envtest"
)

func TestMain(m *testing.M) { os.Exit(envtest.Main(m)) }

// fixture is one test's namespace and Node on the shared real API server.
type fixture struct {
	t    *testing.T
	env  *envtest.Env
	ctx  context.Context
	ns   string
	node string
}

func setup(t *testing.T) *fixture {
	env := envtest.Get(t)
	f := &fixture{t: t, env: env, ctx: context.Background(), ns: env.Namespace(t)}
	f.node = f.ns + "-node"
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: f.node}}
	if _, err := env.Kube.CoreV1().Nodes().Create(f.ctx, n, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating node: %v", err)
	}
	return f
}

type podOpt func(*corev1.Pod)

func annotated(k, v string) podOpt {
	return func(p *corev1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[k] = v
	}
}

func order(o string) podOpt { return annotated(drain.OrderAnnotation, o) }

func ownedBy(kind, apiVersion string) podOpt {
	return func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: "owner",
			UID: types.UID("0000-" + kind), Controller: ptr(true)}}
	}
}

var (
	unmanaged = func(p *corev1.Pod) { p.OwnerReferences = nil }
	emptyDir  = func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	}
	mirror = annotated(corev1.MirrorPodAnnotationKey, "static")
)

// pod creates a Running, Ready pod bound to the fixture's node, owned by a ReplicaSet unless an
// option says otherwise, as the scheduler and kubelet would have left it.
func (f *fixture) pod(name string, opts ...podOpt) *corev1.Pod {
	f.t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Labels: map[string]string{"pod": name}},
		Spec: corev1.PodSpec{NodeName: f.node, TerminationGracePeriodSeconds: ptr(int64(30)),
			Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10.1"}}},
	}
	ownedBy("ReplicaSet", "apps/v1")(p)
	for _, o := range opts {
		o(p)
	}
	pods := f.env.Kube.CoreV1().Pods(f.ns)
	p, err := pods.Create(f.ctx, p, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatalf("creating pod %s: %v", name, err)
	}
	f.setPhase(p, corev1.PodRunning)
	return p
}

func (f *fixture) setPhase(p *corev1.Pod, phase corev1.PodPhase) {
	f.t.Helper()
	cur, err := f.env.Kube.CoreV1().Pods(f.ns).Get(f.ctx, p.Name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatalf("getting pod %s: %v", p.Name, err)
	}
	ready := corev1.ConditionTrue
	if phase != corev1.PodRunning {
		ready = corev1.ConditionFalse
	}
	cur.Status = corev1.PodStatus{Phase: phase, Conditions: []corev1.PodCondition{
		{Type: corev1.PodReady, Status: ready, LastTransitionTime: metav1.Now()}}}
	if _, err := f.env.Kube.CoreV1().Pods(f.ns).UpdateStatus(f.ctx, cur, metav1.UpdateOptions{}); err != nil {
		f.t.Fatalf("setting pod %s to %s: %v", p.Name, phase, err)
	}
}

// state reads a pod: "gone", "terminating" or "present".
func (f *fixture) state(name string) string {
	f.t.Helper()
	p, err := f.env.Kube.CoreV1().Pods(f.ns).Get(f.ctx, name, metav1.GetOptions{})
	switch {
	case err != nil && strings.Contains(err.Error(), "not found"):
		return "gone"
	case err != nil:
		f.t.Fatalf("getting pod %s: %v", name, err)
	case !p.DeletionTimestamp.IsZero():
		return "terminating"
	}
	return "present"
}

func (f *fixture) wantStates(want map[string]string) {
	f.t.Helper()
	for name, w := range want {
		if got := f.state(name); got != w {
			f.t.Errorf("pod %s is %s, want %s", name, got, w)
		}
	}
}

// finish plays the kubelet for one pod: it confirms the termination the eviction started.
func (f *fixture) finish(name string) {
	f.t.Helper()
	if err := f.env.Kube.CoreV1().Pods(f.ns).Delete(f.ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))}); err != nil {
		f.t.Fatalf("finishing pod %s: %v", name, err)
	}
}

// pdb creates a PodDisruptionBudget over the pod and sets the status the disruption controller
// (which envtest does not run) would, with allowed disruptions.
func (f *fixture) pdb(pod string, allowed int32) *policyv1.PodDisruptionBudget {
	f.t.Helper()
	one := intstr.FromInt32(1)
	p := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: f.ns},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"pod": pod}}},
	}
	p, err := f.env.Kube.PolicyV1().PodDisruptionBudgets(f.ns).Create(f.ctx, p, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatalf("creating PDB: %v", err)
	}
	return f.setPDB(p, allowed)
}

func (f *fixture) setPDB(p *policyv1.PodDisruptionBudget, allowed int32) *policyv1.PodDisruptionBudget {
	f.t.Helper()
	p, err := f.env.Kube.PolicyV1().PodDisruptionBudgets(f.ns).Get(f.ctx, p.Name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	p.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: p.Generation, DisruptionsAllowed: allowed,
		CurrentHealthy: 1 + allowed, DesiredHealthy: 1, ExpectedPods: 1 + allowed}
	p, err = f.env.Kube.PolicyV1().PodDisruptionBudgets(f.ns).UpdateStatus(f.ctx, p, metav1.UpdateOptions{})
	if err != nil {
		f.t.Fatalf("setting PDB status: %v", err)
	}
	return p
}

// counting is a client that counts the API server's 429 answers to evictions.
func (f *fixture) counting() (kubernetes.Interface, *atomic.Int64) {
	f.t.Helper()
	var refused atomic.Int64
	cfg := rest.CopyConfig(f.env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil && resp.StatusCode == http.StatusTooManyRequests && strings.HasSuffix(r.URL.Path, "/eviction") {
				refused.Add(1)
			}
			return resp, err
		})
	})
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	return c, &refused
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func ptr[T any](v T) *T { return &v }

var daemonSetPod = ownedBy("DaemonSet", appsv1.SchemeGroupVersion.String())
