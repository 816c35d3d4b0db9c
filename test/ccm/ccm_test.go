package ccm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
	"github.com/slipway-dev/slipway/test/envtest"
)

func TestMain(m *testing.M) { os.Exit(envtest.Main(m)) }

// The taints a kubelet started with --cloud-provider=external registers with, and the one the
// node lifecycle controller puts on Nodes whose server is shut off.
const (
	uninitializedTaint = "node.cloudprovider.kubernetes.io/uninitialized"
	shutdownTaint      = "node.cloudprovider.kubernetes.io/shutdown"
)

// TestInitializesAndDeletesNode runs the CCM's cloud-node and cloud-node-lifecycle controllers
// against the simulator and follows one Node through a server's life: registered uninitialized
// by its kubelet, initialized from Nova and Neutron, given a floating IP, shut off, and deleted
// behind the cluster's back.
func TestInitializesAndDeletesNode(t *testing.T) {
	bin := ccmBinary(t)
	env := envtest.Get(t)
	ctx := context.Background()

	var apiLog simLog
	// A deleted server stays listed (task_state deleting) for a second, as in Nova.
	sim := openstacktest.New(openstacktest.Options{DeleteTime: time.Second, Logf: apiLog.add})
	defer sim.Close()
	defer func() {
		if t.Failed() {
			t.Logf("simulator API calls:\n%s", strings.Join(apiLog.lines(), "\n"))
		}
	}()
	compute, network := clients(t, sim)

	// The server, as a user (or the machine-controller) creates it, and one whose name contains
	// the first's: the CCM finds a Node's server by name, and two matches would be an error.
	const name = "ccm-worker-1"
	var srv *servers.Server
	for _, n := range []string{name, name + "0"} {
		s, err := servers.Create(ctx, compute, servers.CreateOpts{Name: n, FlavorRef: "2",
			ImageRef: sim.Images()[0].ID, Networks: []servers.Network{{UUID: networkID(t, sim, "private")}}}, nil).Extract()
		if err != nil {
			t.Fatalf("creating server %s: %v", n, err)
		}
		if srv == nil {
			srv = s
		}
	}
	envtest.Eventually(t, time.Minute, "the server to be ACTIVE", func() (bool, string) {
		s, err := servers.Get(ctx, compute, srv.ID).Extract()
		if err != nil {
			return false, err.Error()
		}
		return s.Status == "ACTIVE", "status " + s.Status
	})
	port := serverPort(t, network, srv.ID)
	fixedIP := port.FixedIPs[0].IPAddress

	dir := t.TempDir()
	kubeconfig, cloudConf := filepath.Join(dir, "kubeconfig"), filepath.Join(dir, "cloud.conf")
	if err := envtest.WriteKubeconfig(env.Config, kubeconfig); err != nil {
		t.Fatal(err)
	}
	writeCloudConfig(t, sim, cloudConf)
	sim.ResetCalls()
	ccm := startCCM(t, bin,
		"--cloud-provider=openstack", "--cloud-config="+cloudConf, "--kubeconfig="+kubeconfig,
		"--controllers=cloud-node,cloud-node-lifecycle", "--use-service-account-credentials=false",
		"--leader-elect=false", "--secure-port=0",
		// The periodic address sync and the lifecycle check, each once a second (5 minutes and 5
		// seconds by default), so that the test waits seconds for what a cluster sees in minutes.
		"--node-status-update-frequency=1s", "--node-monitor-period=1s", "--v=2")

	// The Node, as a kubelet with --cloud-provider=external registers it: named after the
	// server, without a provider ID or addresses, tainted until the CCM has initialized it.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels: map[string]string{corev1.LabelHostname: name}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: uninitializedTaint, Value: "true", Effect: corev1.TaintEffectNoSchedule}}}}
	if err := env.Client.Create(ctx, node); err != nil {
		t.Fatalf("registering the Node: %v", err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), node) })

	wantLabels := map[string]string{
		corev1.LabelInstanceTypeStable: "m1.small",
		corev1.LabelTopologyZone:       openstacktest.AvailabilityZone,
		corev1.LabelTopologyRegion:     sim.Region(),
	}
	ccm.eventually(t, time.Minute, "the CCM to initialize the Node", func() (bool, string) {
		env.Get(t, node)
		got := nodeState(node)
		want := fmt.Sprintf("providerID=openstack:///%s addresses=[InternalIP=%s] labels=%v uninitialized=false", srv.ID, fixedIP, wantLabels)
		return got == want, "want " + want + ", have " + got
	})
	// The apiserver's TaintNodesByCondition admission adds the not-ready taint, as for any new Node.
	t.Logf("initialized: %s, taints %s", nodeState(node), taints(node))

	// A floating IP attached later reaches the Node through the periodic address sync.
	fip, err := floatingips.Create(ctx, network, floatingips.CreateOpts{FloatingNetworkID: networkID(t, sim, "public"),
		PortID: port.ID}).Extract()
	if err != nil {
		t.Fatalf("creating a floating IP for the server's port: %v", err)
	}
	ccm.eventually(t, 30*time.Second, "the floating IP among the Node's addresses", func() (bool, string) {
		env.Get(t, node)
		got := addresses(node)
		want := fmt.Sprintf("[InternalIP=%s ExternalIP=%s]", fixedIP, fip.FloatingIP)
		return got == want, "want " + want + ", have " + got
	})
	t.Logf("after the floating IP: %s", addresses(node))

	// A server shut off keeps its Node (not Ready), with the shutdown taint: proof that the lifecycle
	// controller looks at this Node and finds its server.
	if err := servers.Stop(ctx, compute, srv.ID).ExtractErr(); err != nil {
		t.Fatalf("stopping the server: %v", err)
	}
	ccm.eventually(t, 30*time.Second, "the shutdown taint", func() (bool, string) {
		env.Get(t, node)
		return hasTaint(node, shutdownTaint), "taints " + taints(node)
	})
	t.Logf("after the server was stopped: taints %s", taints(node))

	// The server deleted behind the cluster's back (openstack server delete): once Nova no longer
	// knows it, the CCM deletes its Node.
	if err := servers.Delete(ctx, compute, srv.ID).ExtractErr(); err != nil {
		t.Fatalf("deleting the server: %v", err)
	}
	ccm.eventually(t, 30*time.Second, "the CCM to delete the Node", func() (bool, string) {
		if !env.Get(t, node.DeepCopy()) {
			return true, ""
		}
		return false, "the Node still exists"
	})
	t.Logf("the Node is gone; simulator calls since the CCM started (the floating IP, stop and delete are the test's): %v",
		sim.Calls().ByRoute)
}

// nodeState renders what the CCM is to set on a Node, for comparison and for messages.
func nodeState(n *corev1.Node) string {
	labels := map[string]string{}
	for _, k := range []string{corev1.LabelInstanceTypeStable, corev1.LabelTopologyZone, corev1.LabelTopologyRegion} {
		if v, ok := n.Labels[k]; ok {
			labels[k] = v
		}
	}
	return fmt.Sprintf("providerID=%s addresses=%s labels=%v uninitialized=%t", n.Spec.ProviderID, addresses(n), labels,
		hasTaint(n, uninitializedTaint))
}

func addresses(n *corev1.Node) string {
	var out []string
	for _, a := range n.Status.Addresses {
		out = append(out, string(a.Type)+"="+a.Address)
	}
	return "[" + strings.Join(out, " ") + "]"
}

func taints(n *corev1.Node) string {
	var out []string
	for _, t := range n.Spec.Taints {
		out = append(out, t.ToString())
	}
	return "[" + strings.Join(out, " ") + "]"
}

func hasTaint(n *corev1.Node, key string) bool {
	return slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == key })
}

// clients authenticates to the simulator as its project's user, as the CCM does.
func clients(t *testing.T, sim *openstacktest.Sim) (compute, network *gophercloud.ServiceClient) {
	t.Helper()
	ctx := context.Background()
	pc, err := openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{IdentityEndpoint: sim.AuthURL(),
		Username: openstacktest.Username, Password: openstacktest.Password,
		DomainName: openstacktest.DomainName, TenantName: openstacktest.ProjectName})
	if err != nil {
		t.Fatalf("authenticating to the simulator: %v", err)
	}
	eo := gophercloud.EndpointOpts{Region: sim.Region()}
	if compute, err = openstack.NewComputeV2(pc, eo); err != nil {
		t.Fatal(err)
	}
	if network, err = openstack.NewNetworkV2(pc, eo); err != nil {
		t.Fatal(err)
	}
	return compute, network
}

func networkID(t *testing.T, sim *openstacktest.Sim, name string) string {
	t.Helper()
	for _, n := range sim.Networks() {
		if n.Name == name {
			return n.ID
		}
	}
	t.Fatalf("the simulator has no network %q", name)
	return ""
}

func serverPort(t *testing.T, network *gophercloud.ServiceClient, serverID string) ports.Port {
	t.Helper()
	pages, err := ports.List(network, ports.ListOpts{DeviceID: serverID}).AllPages(context.Background())
	if err != nil {
		t.Fatalf("listing the server's ports: %v", err)
	}
	list, err := ports.ExtractPorts(pages)
	if err != nil || len(list) != 1 || len(list[0].FixedIPs) == 0 {
		t.Fatalf("want one port with a fixed IP on server %s, have %+v (%v)", serverID, list, err)
	}
	return list[0]
}

// simLog keeps the simulator's one line per API call, for the log of a failed test.
type simLog struct {
	mu sync.Mutex
	l  []string
}

func (s *simLog) add(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.l = append(s.l, fmt.Sprintf(format, args...))
}

func (s *simLog) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.l)
}
