package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/slipway-dev/slipway/pkg/kube"
)

const netcheckImage = "slipway.test/netcheck:e2e"

// importNetcheck builds the netcheck image and imports it into containerd on the given hosts,
// so pods can run it without a registry (imagePullPolicy: Never).
func (h *harness) importNetcheck(hosts ...string) {
	h.t.Helper()
	var containers []string
	for _, host := range hosts {
		containers = append(containers, h.host(host).Container)
	}
	h.importNetcheckInto(containers...)
}

// importNetcheckInto imports the netcheck image into containerd in the given containers (hosts
// of the sandbox or servers of the simulator).
func (h *harness) importNetcheckInto(containers ...string) {
	h.t.Helper()
	img := h.netcheckImage()
	ref, err := name.ParseReference(netcheckImage)
	if err != nil {
		h.t.Fatal(err)
	}
	tarPath := filepath.Join(h.dir, "netcheck.tar")
	if err := tarball.WriteToFile(tarPath, ref, img); err != nil {
		h.t.Fatal(err)
	}
	for _, host := range containers {
		f, err := os.Open(tarPath)
		if err != nil {
			h.t.Fatal(err)
		}
		cmd := exec.Command("docker", "exec", "-i", host, "ctr", "-n", "k8s.io", "images", "import", "-")
		cmd.Stdin = f
		out, err := cmd.CombinedOutput()
		f.Close()
		if err != nil {
			h.t.Fatalf("importing netcheck on %s: %v\n%s", host, err, out)
		}
	}
}

// pushNetcheck pushes the netcheck image to the sandbox's registry and returns the reference a
// pod names it by: under ghcr.io, which every node's containerd mirrors to that registry, so
// nodes that join later pull it as they would any workload's image.
func (h *harness) pushNetcheck() string {
	h.t.Helper()
	img := h.netcheckImage()
	const repo = "slipway-test/netcheck:e2e"
	ref, err := name.ParseReference(strings.TrimPrefix(h.sb.Assets.Registry, "http://")+"/"+repo, name.Insecure)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		h.t.Fatalf("pushing the netcheck image to the sandbox registry: %v", err)
	}
	return "ghcr.io/" + repo
}

// netcheckImage is the image of the netcheck binary built for the tests.
func (h *harness) netcheckImage() v1.Image {
	h.t.Helper()
	data, err := os.ReadFile(netcheckBin)
	if err != nil {
		h.t.Fatal(err)
	}
	img, err := imageWith(data)
	if err != nil {
		h.t.Fatal(err)
	}
	return img
}

// imageWith is a FROM-scratch image holding the netcheck binary as its entrypoint.
func imageWith(binary []byte) (v1.Image, error) {
	var b bytes.Buffer
	if err := tarOne(&b, "netcheck", binary); err != nil {
		return nil, err
	}
	layerBytes := b.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerBytes)), nil
	})
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, err
	}
	img, err = mutate.Config(img, v1.Config{Entrypoint: []string{"/netcheck"}, Cmd: []string{"serve"}})
	if err != nil {
		return nil, err
	}
	// Without a platform, `ctr images import` filters the image out ("image might be filtered
	// out") and the kubelet would not find it.
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	return mutate.ConfigFile(img, cf)
}

// netcheckDaemonSet runs netcheck on every node, control planes included, behind a Service.
func netcheckDaemonSet(ctx context.Context, c kubernetes.Interface) error {
	labels := map[string]string{"app": "netcheck"}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "netcheck", Namespace: "default"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					Containers:  []corev1.Container{netcheckContainer()},
				},
			},
		},
	}
	if _, err := c.AppsV1().DaemonSets("default").Create(ctx, ds, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return service(ctx, c, "netcheck", labels, false)
}

func netcheckContainer() corev1.Container {
	return corev1.Container{
		Name: "netcheck", Image: netcheckImage, ImagePullPolicy: corev1.PullNever,
		Ports:          []corev1.ContainerPort{{ContainerPort: 8080}},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(8080)}}, PeriodSeconds: 1},
	}
}

func service(ctx context.Context, c kubernetes.Interface, name string, selector map[string]string, nodePort bool) error {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       corev1.ServiceSpec{Selector: selector, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}
	if nodePort {
		svc.Spec.Type = corev1.ServiceTypeNodePort
		svc.Spec.Ports[0].NodePort = 30080
	}
	_, err := c.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// checkPodNetwork waits for a netcheck pod on every node, then has each pod fetch every other
// pod directly (pod network across nodes) and the Service by its DNS name (CoreDNS).
func (h *harness) checkPodNetwork(c kubernetes.Interface, nodes int) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := netcheckDaemonSet(ctx, c); err != nil {
		h.t.Fatal(err)
	}
	var pods []corev1.Pod
	err := kube.Wait(ctx, fmt.Sprintf("a Ready netcheck pod on each of %d nodes", nodes), 5*time.Minute, func(ctx context.Context) (bool, string, error) {
		list, err := c.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=netcheck"})
		if err != nil {
			return false, "", err
		}
		pods = pods[:0]
		for _, p := range list.Items {
			if podReady(&p) {
				pods = append(pods, p)
			}
		}
		return len(pods) == nodes, fmt.Sprintf("%d of %d ready", len(pods), len(list.Items)), nil
	})
	if err != nil {
		h.t.Fatal(err)
	}
	for _, from := range pods {
		var urls []string
		for _, to := range pods {
			if to.Name != from.Name {
				urls = append(urls, "http://"+to.Status.PodIP+":8080/")
			}
		}
		urls = append(urls, "http://netcheck.default.svc.cluster.local/")
		// kube-proxy programs a new Service on each node on its own schedule, shortly after the
		// Service and its endpoints appear: allow it a minute before calling the network broken.
		var out string
		err := kube.Wait(ctx, fmt.Sprintf("pod %s on %s to reach the other pods and the Service", from.Name, from.Spec.NodeName), time.Minute,
			func(context.Context) (bool, string, error) {
				var err error
				out, err = h.kubectl(append([]string{"exec", from.Name, "--", "/netcheck", "get"}, urls...)...)
				return err == nil, out, nil
			})
		if err != nil {
			h.t.Fatalf("pod %s on %s cannot reach the others: %v", from.Name, from.Spec.NodeName, err)
		}
		if out, err := h.kubectl("exec", from.Name, "--", "/netcheck", "lookup", "kubernetes.default.svc.cluster.local"); err != nil {
			h.t.Fatalf("CoreDNS does not resolve from %s: %v\n%s", from.Spec.NodeName, err, out)
		}
	}
	h.t.Logf("pod network and DNS work across %d nodes", len(pods))
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// kubectl runs the kubectl built for the tests against the cluster apply saved.
func (h *harness) kubectl(args ...string) (string, error) {
	bin, err := kubeBinary("kubectl")
	if err != nil {
		return "", err
	}
	cmd := exec.Command(bin, append([]string{"--kubeconfig", filepath.Join(h.dir, "e2e-kubeconfig"), "--request-timeout", "30s"}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// kubeBinary returns a Kubernetes binary from the shared build cache.
func kubeBinary(name string) (string, error) {
	out, err := exec.Command(filepath.Join("..", "kube", "build.sh"), "v1.36.3", name).Output()
	if err != nil {
		return "", fmt.Errorf("building %s: %w", name, err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), name), nil
}

// prober is the workload whose availability an upgrade or a pool's rollout must keep: a
// 3-replica Deployment with a PodDisruptionBudget behind a NodePort Service, requested every
// 100 ms the way an external load balancer in front of the nodes sends traffic: round-robin over
// the nodes it considers healthy. Like a cloud load balancer for a NodePort Service, it
// health-checks each node's kube-proxy (/healthz on port 10256, which fails while kube-proxy
// restarts and has not synced its rules) and leaves out nodes that are cordoned for maintenance.
// A node restarting its kube-proxy (the kubeadm upgrade rolls the kube-proxy DaemonSet) drops
// NodePort traffic for a moment whatever slipway does (kubernetes/kubernetes#75360); a load
// balancer routes around it, and so does the prober. When no node in rotation passes the health
// check, it fails open and spreads requests over all of them, as cloud load balancers do (an AWS
// NLB or ALB whose targets are all unhealthy, Envoy below its panic threshold). The kube-proxy
// DaemonSet that `kubeadm upgrade apply` rolls has no readiness probe, so it stops the old
// kube-proxy on the next node as soon as the previous node's new container has started, before
// that one listens on /healthz: for a moment no node may answer the health check, while the
// rules the old kube-proxies left in place go on forwarding. Every request the prober sends
// counts: a failure is a failure.
//
// Its members are either a fixed list of node addresses or, for a pool whose nodes come and go,
// every Node the cloud-controller-manager would put behind a Service's load balancer (all but
// those labelled node.kubernetes.io/exclude-from-external-load-balancers, which kubeadm puts on
// control planes). A member of a changing set is also health-checked on the NodePort itself, as
// an Octavia health monitor does: a node that has just joined serves traffic only once its pod
// network can reach the pods.
type prober struct {
	ok, failed, skipped atomic.Int64
	failedOpen          atomic.Int64 // requests sent while no node passed the health check
	mu                  sync.Mutex
	failures            []string
	healthy, cordoned   map[string]bool // by node IP
	members             []string        // node IPs behind the load balancer
	dynamic             bool            // members follow the cluster's Nodes
	stop                chan struct{}
	stopOnce            sync.Once
	done                sync.WaitGroup
	// timeline records, with the time, every change the prober saw in the cluster: nodes'
	// readiness and cordons, the web pods and their readiness, and the Service's ready
	// endpoints. A failed request is explained by what changed around it.
	timeline []string
	seen     map[string]string // what was last recorded, by subject
	// minAvailable is the fewest web pods seen Ready and not terminating at once (-1 before the
	// first look): what the PodDisruptionBudget (minAvailable 2) must hold up during drains.
	minAvailable int
}

// webWorkload says what the prober runs and where it sends requests.
type webWorkload struct {
	// NodeIPs are the load balancer's members; nil means the Nodes a cloud load balancer takes.
	NodeIPs []string
	// Image is the web pods' image, pulled from a registry; empty means the netcheck image
	// imported into every node beforehand.
	Image string
}

func startProber(t *testing.T, c kubernetes.Interface, w webWorkload) *prober {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	labels := map[string]string{"app": "web"}
	replicas := int32(3)
	container := netcheckContainer()
	if w.Image != "" {
		container.Image, container.ImagePullPolicy = w.Image, corev1.PullIfNotPresent
	}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{container}, TerminationGracePeriodSeconds: ptr(int64(15))},
			},
		},
	}
	if _, err := c.AppsV1().Deployments("default").Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	minAvailable := intstr.FromInt32(2)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvailable, Selector: &metav1.LabelSelector{MatchLabels: labels}},
	}
	if _, err := c.PolicyV1().PodDisruptionBudgets("default").Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := service(ctx, c, "web", labels, true); err != nil {
		t.Fatal(err)
	}
	err := kube.Wait(ctx, "the web Deployment to be available", 3*time.Minute, func(ctx context.Context) (bool, string, error) {
		d, err := c.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return d.Status.AvailableReplicas == 3, fmt.Sprintf("%d available", d.Status.AvailableReplicas), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	p := &prober{stop: make(chan struct{}), healthy: map[string]bool{}, cordoned: map[string]bool{}, seen: map[string]string{},
		members: w.NodeIPs, dynamic: w.NodeIPs == nil, minAvailable: -1}
	if p.dynamic {
		if p.members, err = lbMembers(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	// A load balancer adds a node only once the Service answers there: kube-proxy programs a new
	// NodePort on each node in its own time, a moment after the Service and its endpoints
	// appear, and until then the node refuses connections. Counting those would blame the
	// upgrade for the Service being new.
	hc := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for _, ip := range p.members {
		err := kube.Wait(ctx, "the web Service to answer on node "+ip, time.Minute, func(ctx context.Context) (bool, string, error) {
			resp, err := hc.Get("http://" + ip + ":30080/")
			if err != nil {
				return false, err.Error(), nil
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK, resp.Status, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	p.checkHealth(c)
	p.done.Add(2)
	go func() {
		defer p.done.Done()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-tick.C:
			}
			p.checkHealth(c)
		}
	}()
	go func() {
		defer p.done.Done()
		client := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		next := 0
		for {
			select {
			case <-p.stop:
				return
			case <-tick.C:
			}
			ip := ""
			p.mu.Lock()
			members := p.members
			for i := range members {
				if cand := members[(next+i)%len(members)]; p.healthy[cand] {
					ip, next = cand, (next+i+1)%len(members)
					break
				}
			}
			if ip == "" {
				// Fail open over the nodes in rotation, that is the ones not cordoned.
				for i := range members {
					if cand := members[(next+i)%len(members)]; !p.cordoned[cand] {
						ip, next = cand, (next+i+1)%len(members)
						p.failedOpen.Add(1)
						p.note("load balancer", "failing open: no node passes the health check")
						break
					}
				}
			} else {
				p.note("load balancer", "in rotation and healthy: some nodes")
			}
			p.mu.Unlock()
			if ip == "" {
				p.record(time.Now(), "(no node)", errors.New("every node is cordoned: the load balancer has no node in rotation"))
				continue
			}
			url := "http://" + ip + ":30080/"
			resp, err := client.Get(url)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("%s", resp.Status)
				}
			}
			p.record(time.Now(), url, err)
		}
	}()
	return p
}

// excludeFromLB is the label that keeps a Node out of Services' load balancers.
const excludeFromLB = "node.kubernetes.io/exclude-from-external-load-balancers"

// lbMembers returns the internal addresses of the Nodes a cloud-controller-manager puts behind a
// Service's load balancer, sorted.
func lbMembers(ctx context.Context, c kubernetes.Interface) ([]string, error) {
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	return lbMembersOf(nodes.Items), nil
}

func lbMembersOf(nodes []corev1.Node) []string {
	var ips []string
	for _, n := range nodes {
		if _, excluded := n.Labels[excludeFromLB]; excluded {
			continue
		}
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				ips = append(ips, a.Address)
				break
			}
		}
	}
	sort.Strings(ips)
	return ips
}

func (p *prober) record(at time.Time, url string, err error) {
	if err == nil {
		p.ok.Add(1)
		return
	}
	p.failed.Add(1)
	p.mu.Lock()
	p.failures = append(p.failures, at.Format("15:04:05.000")+" "+url+": "+err.Error())
	p.mu.Unlock()
}

// checkHealth is the load balancer's health check: kube-proxy's /healthz answers 200 on the
// node, and the node is not cordoned (while the API does not answer, the last answer stands). A
// load balancer whose members follow the Nodes also updates its members, and checks that the
// NodePort itself answers.
func (p *prober) checkHealth(c kubernetes.Interface) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err == nil {
		p.mu.Lock()
		for _, n := range nodes.Items {
			for _, a := range n.Status.Addresses {
				if a.Type == corev1.NodeInternalIP {
					p.cordoned[a.Address] = n.Spec.Unschedulable
				}
			}
			p.note("node "+n.Name, fmt.Sprintf("ready %t, cordoned %t, kubelet %s", nodeReady(&n), n.Spec.Unschedulable, n.Status.NodeInfo.KubeletVersion))
		}
		if p.dynamic {
			p.members = lbMembersOf(nodes.Items)
			p.note("load balancer members", strings.Join(p.members, " "))
		}
		p.mu.Unlock()
	}
	p.observeWorkload(ctx, c)
	p.mu.Lock()
	members, dynamic := p.members, p.dynamic
	p.mu.Unlock()
	hc := &http.Client{Timeout: 500 * time.Millisecond, Transport: &http.Transport{DisableKeepAlives: true}}
	check := func(url string) (bool, string) {
		resp, err := hc.Get(url)
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	}
	for _, ip := range members {
		ok, state := check("http://" + ip + ":10256/healthz")
		if ok && dynamic {
			var nodePort string
			ok, nodePort = check("http://" + ip + ":30080/")
			state += ", NodePort " + nodePort
		}
		p.mu.Lock()
		p.note("health of "+ip, state)
		ok = ok && !p.cordoned[ip]
		if p.healthy[ip] && !ok {
			p.skipped.Add(1)
		}
		p.healthy[ip] = ok
		p.mu.Unlock()
	}
}

// observeWorkload records changes of the web pods and of the Service's ready endpoints.
func (p *prober) observeWorkload(ctx context.Context, c kubernetes.Interface) {
	pods, err := c.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		return
	}
	slices, err := c.DiscoveryV1().EndpointSlices("default").List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=web"})
	if err != nil {
		return
	}
	var podStates []string
	available := 0
	for _, pod := range pods.Items {
		state := fmt.Sprintf("%s on %s %s ready=%t", pod.Name, pod.Spec.NodeName, pod.Status.Phase, podReady(&pod))
		if pod.DeletionTimestamp != nil {
			state += " terminating"
		} else if podReady(&pod) {
			available++
		}
		podStates = append(podStates, state)
	}
	var ready []string
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && *e.Conditions.Ready && len(e.Addresses) > 0 {
				node := ""
				if e.NodeName != nil {
					node = *e.NodeName
				}
				ready = append(ready, e.Addresses[0]+"@"+node)
			}
		}
	}
	var proxies []string
	if pods, err := c.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "k8s-app=kube-proxy"}); err == nil {
		for _, pod := range pods.Items {
			proxies = append(proxies, fmt.Sprintf("%s on %s %s ready=%t", pod.Name, pod.Spec.NodeName, pod.Status.Phase, podReady(&pod)))
		}
	}
	sort.Strings(podStates)
	sort.Strings(ready)
	sort.Strings(proxies)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.minAvailable < 0 || available < p.minAvailable {
		p.minAvailable = available
	}
	if proxies != nil {
		p.note("kube-proxy pods", strings.Join(proxies, "; "))
	}
	p.note("web pods", strings.Join(podStates, "; "))
	p.note("web ready endpoints", fmt.Sprintf("%d: %s", len(ready), strings.Join(ready, " ")))
}

// note adds a line to the timeline when a subject's state changed. p.mu must be held.
func (p *prober) note(subject, state string) {
	if p.seen[subject] == state {
		return
	}
	p.seen[subject] = state
	p.timeline = append(p.timeline, time.Now().Format("15:04:05.000")+" "+subject+": "+state)
}

// Stop stops the requests and the health checks (once; later calls only report) and reports.
func (p *prober) Stop() (ok, failed int64, failures []string) {
	p.stopOnce.Do(func() { close(p.stop) })
	p.done.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ok.Load(), p.failed.Load(), p.failures
}

// MinAvailable is the fewest web pods the prober saw Ready and not terminating at once.
func (p *prober) MinAvailable() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.minAvailable
}

// Timeline is what the prober saw change in the cluster while it ran.
func (p *prober) Timeline() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.timeline...)
}

func ptr[T any](v T) *T { return &v }
