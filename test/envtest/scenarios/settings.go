package scenarios

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/bootstrap"
	"github.com/slipway-dev/slipway/pkg/cloud"
	"github.com/slipway-dev/slipway/test/envtest"
)

// NodeSettings checks that a new Machine's user-data follows the node settings that apply
// writes into the cluster, read when the Machine is created: the setup scripts for the
// Machine's kubelet version, a change to the settings (a proxy, which it then fetches) in the
// next Machine without a restart of the controller, and a clear condition when the settings are
// missing.
func NodeSettings(t *testing.T, env *envtest.Env, newCloud NewCloud) {
	rc := &recordingCloud{userdata: map[string]string{}}
	f := setup(t, env, func(t *testing.T) Cloud { rc.Cloud = newCloud(t); return rc }, nil)
	key := client.ObjectKey{Namespace: bootstrap.SettingsNamespace, Name: bootstrap.SettingsSecret}
	original := &corev1.Secret{}
	if err := env.Client.Get(f.ctx, key, original); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.restoreSettings(original) })

	md := f.deployment("settings", 1, intstr.FromInt32(1), intstr.FromInt32(0))
	f.create(md)
	first := f.waitRunning(1)[0]
	ud := rc.get(first.Name)
	for _, want := range []string{
		"#cloud-config", "/usr/local/sbin/slipway-join", "want='1.36.3'", // the Machine's kubelet, not the settings' v1.37.2
		"slipway prerequisites:", v1alpha1.NotReadyTaintKey, "value: external",
		"https://github.com/containerd/containerd/releases/download",
	} {
		if !strings.Contains(ud, want) {
			t.Errorf("the user-data of %s lacks %q", first.Name, want)
		}
	}

	s := envtest.NodeSettings()
	s.Cluster.Proxy.HTTPS = "http://proxy.envtest.example:3128"
	f.writeSettings(s)
	f.scale(md, 2)
	var second string
	for _, m := range f.waitRunning(2) {
		if m.Name != first.Name {
			second = m.Name
		}
	}
	// The proxy is fetched by the machine, never carried (see NodeCredentials).
	if ud := rc.get(second); !strings.Contains(ud, "/etc/slipway/node/fetch-credentials") || strings.Contains(ud, "proxy.envtest.example") {
		t.Errorf("the user-data of %s, created after the settings changed, does not fetch their proxy", second)
	}
	if strings.Contains(rc.get(first.Name), "fetch-credentials") {
		t.Errorf("the user-data of %s fetches the proxy set after it was created", first.Name)
	}

	// With the CNI's pods named, a Ready Node keeps its not-ready taint until its CNI pod runs.
	// The first two Nodes lost theirs before: wait for that, so that only the third waits.
	envtest.Eventually(t, wait, "the first two Machines' Nodes Ready", func() (bool, string) {
		ms := f.machines()
		for _, m := range ms {
			if !condTrue(m.Status.Conditions, v1alpha1.MachineNodeReady) {
				return false, describe(ms)
			}
		}
		return true, ""
	})
	s.CNIPods = &bootstrap.PodSelector{Namespace: f.ns, Selector: "app=cni-envtest"}
	f.writeSettings(s)
	f.scale(md, 3)
	var third *v1alpha1.Machine
	envtest.Eventually(t, wait, "the third Machine's Node Ready, waiting for its CNI pod", func() (bool, string) {
		for _, m := range f.machines() {
			if m.Name == first.Name || m.Name == second {
				continue
			}
			if c := findCond(m.Status.Conditions, v1alpha1.MachineNodeReady); c != nil && c.Reason == "PodNetworkNotReady" && m.Status.NodeRef != nil {
				third = &m
				return true, ""
			}
		}
		return false, describe(f.machines())
	})
	node := &corev1.Node{}
	node.Name = third.Status.NodeRef.Name
	if !f.env.Get(t, node) || !hasNotReadyTaint(node) {
		t.Fatalf("node %s lost its not-ready taint before its CNI pod ran: %v", node.Name, node.Spec.Taints)
	}
	f.runPod("cni-"+node.Name, node.Name, map[string]string{"app": "cni-envtest"}, nil, false)
	envtest.Eventually(t, wait, "the not-ready taint lifted once the CNI pod runs", func() (bool, string) {
		n := &corev1.Node{}
		n.Name = node.Name
		if !f.env.Get(t, n) {
			return false, "node gone"
		}
		return !hasNotReadyTaint(n), fmt.Sprintf("taints %v", n.Spec.Taints)
	})
	f.waitRunning(3)

	if err := env.Client.Delete(f.ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}); err != nil {
		t.Fatal(err)
	}
	f.scale(md, 4)
	envtest.Eventually(t, wait, "a Machine that says the node settings are missing", func() (bool, string) {
		for _, m := range f.machines() {
			if c := findCond(m.Status.Conditions, v1alpha1.MachineInstanceReady); c != nil && c.Reason == "CreateFailed" &&
				strings.Contains(c.Message, "node settings kube-system/machine-controller-node-settings are missing: slipway apply writes them") {
				return true, ""
			}
		}
		return false, describe(f.machines())
	})
	if n := rc.Len(); n != 3 {
		t.Errorf("%d servers: a Machine without node settings must get no server", n)
	}
}

func hasNotReadyTaint(n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == v1alpha1.NotReadyTaintKey {
			return true
		}
	}
	return false
}

// writeSettings replaces the node settings Secret's content with s.
func (f *fixture) writeSettings(s bootstrap.Settings) {
	f.t.Helper()
	data, err := s.Marshal()
	if err != nil {
		f.t.Fatal(err)
	}
	sec := &corev1.Secret{}
	if err := f.env.Client.Get(f.ctx, client.ObjectKey{Namespace: bootstrap.SettingsNamespace, Name: bootstrap.SettingsSecret}, sec); err != nil {
		f.t.Fatal(err)
	}
	sec.Data = map[string][]byte{bootstrap.SettingsKey: data}
	if err := f.env.Client.Update(f.ctx, sec); err != nil {
		f.t.Fatal(err)
	}
}

// recordingCloud keeps the user-data of every server it creates, by Machine name.
type recordingCloud struct {
	Cloud
	mu       sync.Mutex
	userdata map[string]string
}

func (r *recordingCloud) Create(ctx context.Context, m *v1alpha1.Machine, update cloud.MachineUpdater, userdata string) (*cloud.Instance, error) {
	r.mu.Lock()
	r.userdata[m.Name] = userdata
	r.mu.Unlock()
	return r.Cloud.Create(ctx, m, update, userdata)
}

func (r *recordingCloud) get(machine string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ud, ok := r.userdata[machine]
	if !ok {
		return fmt.Sprintf("(no server created for %s)", machine)
	}
	return ud
}
