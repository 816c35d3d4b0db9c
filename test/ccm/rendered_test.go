package ccm

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/ccmdeploy"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/mcdeploy"
	"github.com/slipway-dev/slipway/test/envtest"
)

// TestRenderedCCMInitializesNode runs the CCM exactly as slipway deploys it: the OS_* variables
// of an https simulator (with its CA in OS_CACERT) go through mcdeploy.Credentials and
// ccmdeploy.Render, as in apply; the objects are server-side applied to the API server; and the
// CCM binary is started with the DaemonSet's arguments and the Secret's files as the API server
// returns them, as the ServiceAccount the manifests bind (so that their RBAC is what it has).
// What a pod would get from its environment is replaced: the files live in a temporary
// directory instead of the mount path, the binary is this machine's, the API is reached through
// a kubeconfig instead of the in-cluster one, and the secure port is a free one. The CCM must
// take the leader Lease, serve /healthz where the liveness probe asks, and initialize the
// Node of a simulator server.
func TestRenderedCCMInitializesNode(t *testing.T) {
	bin := ccmBinary(t)
	env := envtest.Get(t)
	ctx := context.Background()
	dir := t.TempDir()

	var apiLog simLog
	sim := openstacktest.NewTLS(openstacktest.Options{Logf: apiLog.add})
	defer sim.Close()
	defer func() {
		if t.Failed() {
			t.Logf("simulator API calls:\n%s", strings.Join(apiLog.lines(), "\n"))
		}
	}()
	caFile := filepath.Join(dir, "os-ca.pem")
	if err := os.WriteFile(caFile, sim.CACert(), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"OS_AUTH_URL": sim.AuthURL(), "OS_USERNAME": openstacktest.Username, "OS_PASSWORD": openstacktest.Password,
		"OS_USER_DOMAIN_NAME": openstacktest.DomainName, "OS_PROJECT_NAME": openstacktest.ProjectName,
		"OS_PROJECT_DOMAIN_NAME": openstacktest.DomainName, "OS_REGION_NAME": sim.Region(), "OS_CACERT": caFile}
	creds, err := mcdeploy.Credentials(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	c := &v1beta1.Cluster{Name: "rendered", CloudProvider: v1beta1.CloudProvider{OpenStack: &v1beta1.OpenStackCloud{}, External: true}}
	objs, err := ccmdeploy.Render(c, creds)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := kube.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := kc.Apply(ctx, objs); err != nil {
		t.Fatalf("applying the rendered objects: %v", err)
	}

	// What the cluster holds: the DaemonSet's container and the Secret it mounts.
	ds, err := env.Kube.AppsV1().DaemonSets(ccmdeploy.Namespace).Get(ctx, ccmdeploy.DaemonSet, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	secret, err := env.Kube.CoreV1().Secrets(ccmdeploy.Namespace).Get(ctx, ccmdeploy.ConfigSecret, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mount := configMount(t, ds)
	for name, data := range secret.Data {
		data = []byte(strings.ReplaceAll(string(data), mount, dir))
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctr := ds.Spec.Template.Spec.Containers[0]
	args := make([]string, 0, len(ctr.Args))
	for _, a := range ctr.Args[1:] { // the first is the binary's path in the image
		args = append(args, strings.ReplaceAll(a, mount, dir))
	}

	sa := "system:serviceaccount:" + ccmdeploy.Namespace + ":" + ds.Spec.Template.Spec.ServiceAccountName
	saConfig, err := env.UserConfig(sa, "system:serviceaccounts", "system:serviceaccounts:"+ccmdeploy.Namespace, "system:authenticated")
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := envtest.WriteKubeconfig(saConfig, kubeconfig); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	args = append(args, "--kubeconfig="+kubeconfig, "--authentication-kubeconfig="+kubeconfig, "--authorization-kubeconfig="+kubeconfig,
		"--secure-port="+strconv.Itoa(port))
	t.Logf("running the CCM with the rendered arguments (and the test's): %v", args)
	ccm := startCCM(t, bin, args...)

	ccm.eventually(t, time.Minute, "the CCM to hold the leader Lease", func() (bool, string) {
		l, err := env.Kube.CoordinationV1().Leases(ccmdeploy.Namespace).Get(ctx, "cloud-controller-manager", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "", "no holder"
	})
	probe := ctr.LivenessProbe.HTTPGet
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the CCM's self-signed serving certificate, as the kubelet's probe accepts it
	healthz := fmt.Sprintf("%s://%s:%d%s", strings.ToLower(string(probe.Scheme)), probe.Host, port, probe.Path)
	ccm.eventually(t, 30*time.Second, "the liveness probe's "+healthz+" to answer 200", func() (bool, string) {
		resp, err := hc.Get(healthz)
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})

	// A server and its Node, registered as a kubelet with --cloud-provider=external does.
	compute := tlsCompute(t, sim)
	const name = "rendered-worker-1"
	srv, err := servers.Create(ctx, compute, servers.CreateOpts{Name: name, FlavorRef: "2",
		ImageRef: sim.Images()[0].ID, Networks: []servers.Network{{UUID: networkID(t, sim, "private")}}}, nil).Extract()
	if err != nil {
		t.Fatalf("creating server: %v", err)
	}
	envtest.Eventually(t, time.Minute, "the server to be ACTIVE", func() (bool, string) {
		s, err := servers.Get(ctx, compute, srv.ID).Extract()
		if err != nil {
			return false, err.Error()
		}
		return s.Status == "ACTIVE", "status " + s.Status
	})
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: uninitializedTaint, Value: "true", Effect: corev1.TaintEffectNoSchedule}}}}
	if err := env.Client.Create(ctx, node); err != nil {
		t.Fatalf("registering the Node: %v", err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), node) })
	ccm.eventually(t, time.Minute, "the CCM to initialize the Node", func() (bool, string) {
		env.Get(t, node)
		want := "openstack:///" + srv.ID
		return node.Spec.ProviderID == want && !hasTaint(node, uninitializedTaint) && len(node.Status.Addresses) > 0,
			"want providerID " + want + " and no uninitialized taint; have " + nodeState(node)
	})
	t.Logf("initialized by the rendered CCM: %s", nodeState(node))

	// Whatever the CCM's controllers did, the RBAC the manifests grant allowed it.
	out, err := os.ReadFile(ccm.log)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "forbidden") {
			t.Errorf("the CCM was refused by RBAC: %s", line)
		}
	}
}

// configMount is where the DaemonSet mounts the cloud.conf Secret.
func configMount(t *testing.T, ds *appsv1.DaemonSet) string {
	t.Helper()
	spec := ds.Spec.Template.Spec
	for _, v := range spec.Volumes {
		if v.Secret == nil || v.Secret.SecretName != ccmdeploy.ConfigSecret {
			continue
		}
		for _, m := range spec.Containers[0].VolumeMounts {
			if m.Name == v.Name {
				return m.MountPath
			}
		}
	}
	t.Fatalf("the DaemonSet does not mount Secret %s", ccmdeploy.ConfigSecret)
	return ""
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// tlsCompute authenticates to an https simulator, trusting its CA, as the project's user.
func tlsCompute(t *testing.T, sim *openstacktest.Sim) *gophercloud.ServiceClient {
	t.Helper()
	pc, err := sim.ProjectClient(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	compute, err := openstack.NewComputeV2(pc, gophercloud.EndpointOpts{Region: sim.Region()})
	if err != nil {
		t.Fatal(err)
	}
	return compute
}
