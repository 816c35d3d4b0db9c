package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
	"github.com/slipway-dev/slipway/pkg/kube"
	tfout "github.com/slipway-dev/slipway/pkg/terraform"
	"github.com/slipway-dev/slipway/test/openstack-sim/hosts"
	"github.com/slipway-dev/slipway/test/sandbox/sandboxapi"
	"github.com/slipway-dev/slipway/test/terraform"
)

// quickCloud names the quick start's simulator; its hosts carry it in their Docker labels.
const quickCloud = "e2equick"

// TestQuickStart runs the OpenStack quick start end to end, as terraform/openstack/README.md
// tells a user to: terraform apply of terraform/openstack, unchanged, with only the OS_*
// variables and a tfvars file written for the simulator; slipway apply -t on its directory,
// which reaches the three control planes (private addresses only) through the bastion, trusting
// their host keys on first use, and puts them behind the Octavia load balancer (an amphora
// container); the machine-controller creates the pool Terraform describes (pool1) in the
// Terraform network; a workload answers through a NodePort on each worker, fetched through the
// bastion as a user would; a second apply plans nothing; a larger worker_replicas, terraform
// apply and slipway apply -t grow the pool; slipway reset; terraform destroy; nothing is left in
// the cloud or in Docker. Each phase's time is logged ("phase ...").
//
// The sandbox here is only its assets host (packages, containerd, the registry mirror) and one
// idle host (the sandbox needs one). The assets host sits on the sandbox's Docker network,
// which the Terraform network cannot reach, as an internet mirror sits outside a cloud: the
// test forwards its ports from this machine's address on the cloud's external network, which
// every server reaches through its router, where the cloud's API is served too.
func TestQuickStart(t *testing.T) {
	h := upSandboxWith(t, "quickstart", "172.30.253.0/24", 1, 1, false, []string{current})
	work := t.TempDir()
	cliConfig := filepath.Join(work, "terraform.rc")
	bin := terraform.Tools(t, cliConfig)

	var gateway, external string
	cloud := h.startSim(t, hosts.Options{Name: quickCloud}, func(ctx context.Context, b *hosts.Backend, sim *openstacktest.Sim) (string, error) {
		for _, n := range sim.Networks() {
			if info, ok := sim.NetworkInfo(n.ID); ok && n.External {
				external = n.ID
				var err error
				gateway, err = b.HostAddress(ctx, info)
				return gateway, err
			}
		}
		return "", errors.New("the simulator has no external network")
	})
	for k, v := range terraform.Env(cloud.sim, cliConfig, cloud.caFile) {
		t.Setenv(k, v)
	}
	for _, k := range []string{"OS_CLOUD", "OS_TOKEN", "OS_PROJECT_ID", "OS_TENANT_NAME", "OS_APPLICATION_CREDENTIAL_ID", "OS_DOMAIN_NAME"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	registry := "http://" + forward(t, gateway, strings.TrimPrefix(h.sb.Assets.Registry, "http://"))
	files := "http://" + forward(t, gateway, strings.TrimPrefix(h.sb.Assets.Files, "http://"))
	seeded := terraform.Snapshot(cloud.sim)

	dir := filepath.Join(work, "openstack")
	terraform.CopyConfig(t, "../../terraform/openstack", dir)
	h.writeQuickVars(t, dir, 2)
	tf := terraform.NewRunner(t, dir, bin)
	tfApply := func(ctx context.Context, tf *tfexec.Terraform) error { return tf.Apply(ctx) }
	destroyed := false
	t.Cleanup(func() { // runs before the simulator stops: leave no state behind a failed run
		if !destroyed {
			_ = tf.TF.Destroy(context.Background())
		}
	})
	var timings []string
	// phase runs one step of the quick start and logs its time; t is the (sub)test it runs in.
	phase := func(t *testing.T, name string, run func()) {
		t.Helper()
		start := time.Now()
		run()
		took := time.Since(start).Round(time.Second)
		timings = append(timings, fmt.Sprintf("%s %s", name, took))
		t.Logf("phase %s: %s", name, took)
	}
	defer func() { t.Logf("phases: %s", strings.Join(timings, ", ")) }()

	phase(t, "terraform apply", func() { tf.Do(t, "apply", tfApply) })
	out, err := tfout.Load(context.Background(), dir, nil)
	if err != nil {
		t.Fatalf("slipway's parser refuses the outputs: %v", err)
	}
	// The manifest holds what Terraform does not: versions, the assets as the servers reach
	// them (upstreamDNS names the same address: nothing answers DNS there, and nothing needs
	// to), and pool1's operating system and label (Terraform's output says ubuntu; the
	// simulator's debian-12 image is Debian), which win over Terraform's for that pool.
	manifest := h.writeManifest("quickstart.yaml", manifestParams{Version: current, Cloud: "{openstack: {}, external: true}",
		Registry: registry, Files: files, DNS: gateway,
		Extra: "workers:\n  - name: pool1\n    providerSpec: {operatingSystem: debian, labels: {e2e.slipway.dev/pool: pool1}}\n"})
	apply := func(t *testing.T, extra ...string) {
		t.Helper()
		if r := h.with(t).slipway(nil, append([]string{"apply", "-m", manifest, "-t", dir, "--auto-approve"}, extra...)...); r.code != 0 {
			t.Fatalf("slipway apply -t failed with exit code %d", r.code)
		}
	}
	// terraform apply returns when Nova says ACTIVE, before the servers' sshd answers: slipway
	// apply, run at once as a user would, retries their SSH (--ssh-connect-timeout, 2 minutes).
	applied := time.Now()
	phase(t, "slipway apply", func() { apply(t, "--trust-unknown-hosts") })
	phase(t, "pool Ready", func() { h.waitPoolReady(t, 2) })
	t.Logf("pool1's 2 nodes Ready %s after slipway apply started", time.Since(applied).Round(time.Second))
	h.expectPool(t, cloud, "pool1", 2, current)
	h.expectQuickCluster(t, out)

	t.Run("a workload answers through a NodePort on each worker, reached through the bastion", func(t *testing.T) {
		h.with(t).checkNodePort(t, out)
	})
	t.Run("kubectl through slipway proxy reaches a control plane's private address through the bastion", func(t *testing.T) {
		h.with(t).checkProxy(t, manifest, dir, out)
	})
	t.Run("a second apply on the same infrastructure plans nothing", func(t *testing.T) {
		if p := h.with(t).planWith(nil, manifest, "-t", dir); len(p.Steps) != 0 {
			t.Errorf("a second apply plans steps: %v", stepList(p))
		}
	})
	t.Run("worker_replicas 3 in tfvars, terraform apply, slipway apply -t: the pool grows", func(t *testing.T) {
		h := h.with(t)
		h.writeQuickVars(t, dir, 3)
		phase(t, "terraform apply (worker_replicas 3)", func() { tf.Do(t, "apply", tfApply) })
		phase(t, "slipway apply (pool 2 → 3)", func() { apply(t) })
		phase(t, "pool Ready (3)", func() { h.waitPoolReady(t, 3) })
		h.expectPool(t, cloud, "pool1", 3, current)
	})

	phase(t, "slipway reset", func() {
		if r := h.slipway(nil, "reset", "-m", manifest, "-t", dir, "--auto-approve"); r.code != 0 {
			t.Fatalf("slipway reset failed with exit code %d", r.code)
		}
	})
	// Only what Terraform made is left: the pool's servers went with reset.
	for _, s := range cloud.sim.Servers() {
		if !strings.HasPrefix(s.Name, "e2e-cp-") && s.Name != "e2e-bastion" {
			t.Errorf("server %s (%s) is left after reset", s.Name, s.ID)
		}
	}
	phase(t, "terraform destroy", func() {
		tf.Do(t, "destroy", func(ctx context.Context, tf *tfexec.Terraform) error { return tf.Destroy(ctx) })
	})
	destroyed = true
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	terraform.CheckNothingLeft(ctx, t, cloud.sim, seeded, "e2e-")
	// The external network's Docker network stays: this machine serves the API on it.
	terraform.CheckNoHosts(ctx, t, quickCloud, external)
}

// writeQuickVars writes terraform.tfvars.json for the simulator: its external network, the
// image every server boots (the sandbox's node image), flavors it has, the sandbox's SSH key,
// and the pool's size.
func (h *harness) writeQuickVars(t *testing.T, dir string, workers int) {
	t.Helper()
	key := h.sb.Path(sandboxapi.KeyFile)
	vars, err := json.Marshal(map[string]any{
		"cluster_name": "e2e", "external_network_name": "public", "image": "debian-12",
		"bastion_flavor": "m1.small", "control_plane_flavor": "m1.medium", "worker_flavor": "m1.small",
		"worker_replicas": workers, "ssh_user": "debian", "ssh_public_key_file": key + ".pub", "ssh_private_key_file": key,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "terraform.tfvars.json"), vars, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitPoolReady waits until pool1 has replicas Machines whose Nodes are Ready.
func (h *harness) waitPoolReady(t *testing.T, replicas int) {
	t.Helper()
	err := kube.Wait(context.Background(), fmt.Sprintf("pool1's %d nodes Ready", replicas), 10*time.Minute, func(ctx context.Context) (bool, string, error) {
		ready := h.readyPoolNodes(t, "pool1")
		return len(ready) == replicas && len(h.poolMachines(t, "pool1")) == replicas, fmt.Sprintf("ready: %v", ready), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// expectQuickCluster checks the control plane Terraform made: three Ready control-plane Nodes
// named after the servers, with private addresses only, and the API reached through the load
// balancer's floating IP.
func (h *harness) expectQuickCluster(t *testing.T, out *tfout.Output) {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(filepath.Join(h.dir, "e2e-kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range cfg.Clusters {
		if c.Server != "https://"+out.API.Endpoint {
			t.Errorf("kubeconfig cluster %s points at %s, want the load balancer's https://%s", name, c.Server, out.API.Endpoint)
		}
	}
	subnet := netip.MustParsePrefix("192.168.1.0/24") // terraform/openstack's default subnet_cidr
	nodes := append(slices.Clone(out.ControlPlane.Hostnames), h.readyPoolNodes(t, "pool1")...)
	h.expectNodes(h.kube("e2e"), nodes, current)
	for _, name := range out.ControlPlane.Hostnames {
		n, err := h.kube("e2e").CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range n.Status.Addresses {
			if ip, err := netip.ParseAddr(a.Address); err == nil && !subnet.Contains(ip) {
				t.Errorf("control plane %s has address %s (%s) outside the private subnet %s", name, a.Address, a.Type, subnet)
			}
		}
	}
}

// checkNodePort runs a Deployment on the pool behind a NodePort Service and fetches it at each
// worker's private address through an SSH tunnel from the bastion, as a user without a route
// to the private network would, verifying the bastion by the key apply recorded.
func (h *harness) checkNodePort(t *testing.T, out *tfout.Output) {
	t.Helper()
	c := h.kube("e2e")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	labels := map[string]string{"app": "web"}
	container := netcheckContainer()
	container.Image, container.ImagePullPolicy = h.pushNetcheck(), corev1.PullIfNotPresent
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(int32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{NodeSelector: map[string]string{"e2e.slipway.dev/pool": "pool1"},
					Containers: []corev1.Container{container}},
			},
		},
	}
	if _, err := c.AppsV1().Deployments("default").Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := service(ctx, c, "web", labels, true); err != nil {
		t.Fatal(err)
	}
	bastion := h.dialBastion(t, out.ControlPlane)
	defer bastion.Close()
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: func(_ context.Context, network, addr string) (net.Conn, error) { return bastion.Dial(network, addr) }}}
	for _, node := range h.readyPoolNodes(t, "pool1") {
		n, err := c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var ip string
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				ip = a.Address
			}
		}
		url := "http://" + net.JoinHostPort(ip, "30080") + "/"
		err = kube.Wait(ctx, "the web Service through the bastion at "+url+" (node "+node+")", 3*time.Minute, func(ctx context.Context) (bool, string, error) {
			resp, err := hc.Get(url)
			if err != nil {
				return false, err.Error(), nil
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
			return resp.StatusCode == http.StatusOK, fmt.Sprintf("%s: %s", resp.Status, body), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("node %s answers on NodePort 30080 at %s, through the bastion", node, ip)
	}
}

// dialBastion logs into the bastion with the key from the Terraform output, checking its host
// key against the cluster's known_hosts file that apply --trust-unknown-hosts wrote.
func (h *harness) dialBastion(t *testing.T, cp *tfout.HostGroup) *ssh.Client {
	t.Helper()
	addr := net.JoinHostPort(cp.Bastion, "22")
	data, err := os.ReadFile(filepath.Join(h.dir, "config", "slipway", "e2e", "known_hosts"))
	if err != nil {
		t.Fatal(err)
	}
	var key ssh.PublicKey
	for rest := data; len(rest) > 0 && key == nil; {
		_, names, k, _, next, err := ssh.ParseKnownHosts(rest)
		if err != nil {
			break
		}
		if slices.Contains(names, knownhosts.Normalize(addr)) {
			key = k
		}
		rest = next
	}
	if key == nil {
		t.Fatalf("the cluster's known_hosts has no key for the bastion %s:\n%s", addr, data)
	}
	pem, err := os.ReadFile(cp.SSHPrivateKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(pem)
	if err != nil {
		t.Fatal(err)
	}
	user := cp.BastionUser
	if user == "" {
		user = cp.SSHUser
	}
	c, err := ssh.Dial("tcp", addr, &ssh.ClientConfig{User: user, Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(key), HostKeyAlgorithms: []string{key.Type()}, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("ssh %s@%s (the bastion): %v", user, addr, err)
	}
	return c
}

// forward serves target (host:port) at ip on a free port of this machine until the test ends,
// and returns that address.
func forward(t *testing.T, ip, target string) string {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatalf("listening on %s to forward %s: %v", ip, target, err)
	}
	logw := &testWriter{t: t}
	t.Cleanup(func() {
		l.Close()
		logw.stop()
	})
	go hosts.Forward(l, target, func(format string, args ...any) { fmt.Fprintf(logw, format, args...) })
	return l.Addr().String()
}
