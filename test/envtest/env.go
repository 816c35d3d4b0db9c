package envtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/bootstrap"
	"github.com/slipway-dev/slipway/pkg/cloud"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack"
	"github.com/slipway-dev/slipway/pkg/controller"
	admission "github.com/slipway-dev/slipway/pkg/webhook"
)

// KubeVersion is the Kubernetes version whose kube-apiserver the tests run.
const KubeVersion = "v1.36.3"

// ServiceAccount is the user the controllers run as in tests, bound by manifests/machine-controller.
const ServiceAccount = "system:serviceaccount:kube-system:machine-controller"

// Env is a running kube-apiserver and etcd with the CRDs, RBAC and webhook installed.
type Env struct {
	// Config is an admin's; ControllerConfig is the machine-controller service account's.
	Config, ControllerConfig *rest.Config
	// Client is an uncached admin client.
	Client client.WithWatch
	Kube   kubernetes.Interface
	// Root is the repository root.
	Root string

	env        *crenvtest.Environment
	stopServer context.CancelFunc
	serverDone chan struct{}
}

var (
	shared     *Env
	sharedErr  error
	sharedOnce sync.Once
	// inMain is set by Main: only then is the shared environment stopped when the package's
	// tests end. Without it, kube-apiserver and etcd would outlive the test binary.
	inMain atomic.Bool
)

// Main runs the package's tests and stops the shared environment afterwards. Call it from
// TestMain: os.Exit(envtest.Main(m)).
func Main(m *testing.M) int {
	log.SetLogger(zap.New(zap.UseDevMode(true), zap.Level(zapcore.Level(zapLevel()))))
	inMain.Store(true)
	code := m.Run()
	if shared != nil {
		shared.stop()
	}
	return code
}

// Get returns the shared environment, starting it on first use. It skips the test under -short
// or when the binaries are missing, and fails it instead when CI=true: in CI nothing may skip.
func Get(t testing.TB) *Env {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a kube-apiserver and etcd; skipped under -short")
	}
	if !inMain.Load() {
		t.Fatal("envtest.Get needs the package's TestMain to run the tests through envtest.Main, which stops kube-apiserver and etcd when they end: func TestMain(m *testing.M) { os.Exit(envtest.Main(m)) }")
	}
	sharedOnce.Do(func() { shared, sharedErr = start() })
	if sharedErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("starting kube-apiserver and etcd: %v", sharedErr)
		}
		t.Skipf("cannot start kube-apiserver and etcd: %v", sharedErr)
	}
	return shared
}

// repoRoot finds the repository root from this file's location.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// binDir returns the directory holding kube-apiserver and etcd: KUBEBUILDER_ASSETS if set, else
// test/kube/build.sh's cache. In CI it runs build.sh when the binaries are missing.
func binDir(root string) (string, error) {
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		return d, nil
	}
	cache := os.Getenv("SLIPWAY_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "slipway")
	}
	gover, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOVERSION: %w", err)
	}
	dir := filepath.Join(cache, "kube", KubeVersion+"-"+strings.TrimSpace(string(gover)), "bin")
	have := func() bool {
		for _, b := range []string{"kube-apiserver", "etcd"} {
			if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
				return false
			}
		}
		return true
	}
	if have() {
		return dir, nil
	}
	if os.Getenv("CI") != "true" && os.Getenv("SLIPWAY_BUILD_KUBE") != "1" {
		return "", fmt.Errorf("no kube-apiserver and etcd in %s: run test/kube/build.sh %s kube-apiserver (or set SLIPWAY_BUILD_KUBE=1)", dir, KubeVersion)
	}
	cmd := exec.Command("bash", filepath.Join(root, "test", "kube", "build.sh"), KubeVersion, "kube-apiserver")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("test/kube/build.sh %s kube-apiserver: %w", KubeVersion, err)
	}
	return strings.TrimSpace(string(out)), nil
}

func start() (*Env, error) {
	root := repoRoot()
	bin, err := binDir(root)
	if err != nil {
		return nil, err
	}
	te := &crenvtest.Environment{
		BinaryAssetsDirectory:    bin,
		ControlPlaneStartTimeout: ControlPlaneTimeout,
		ControlPlaneStopTimeout:  ControlPlaneTimeout,
		CRDDirectoryPaths:        []string{filepath.Join(root, "manifests", "crds")},
		ErrorIfCRDPathMissing:    true,
		WebhookInstallOptions: crenvtest.WebhookInstallOptions{
			Paths: []string{filepath.Join(root, "manifests", "machine-controller", "webhook.yaml")},
		},
	}
	// As kubeadm runs it: pool machines fetch their node credentials with a bootstrap token.
	te.ControlPlane.GetAPIServer().Configure().Set("enable-bootstrap-token-auth", "true")
	cfg, err := te.Start()
	if err != nil {
		// Start may fail after etcd and the apiserver are up (installing the CRDs, say); stop
		// them, or they outlive the test process.
		return nil, errorsJoin(fmt.Errorf("starting envtest from %s: %w", bin, err), te.Stop())
	}
	e := &Env{Config: cfg, Root: root, env: te}
	if err := e.init(); err != nil {
		e.stop()
		return nil, err
	}
	return e, nil
}

func (e *Env) init() error {
	scheme, err := controller.Scheme()
	if err != nil {
		return err
	}
	if e.Client, err = client.NewWithWatch(e.Config, client.Options{Scheme: scheme}); err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	if e.Kube, err = kubernetes.NewForConfig(e.Config); err != nil {
		return fmt.Errorf("creating clientset: %w", err)
	}
	ctx := context.Background()
	for _, f := range []string{"role.yaml", "serviceaccount.yaml", "secrets-policy.yaml", "node-credentials.yaml"} {
		if err := e.Apply(ctx, filepath.Join(e.Root, "manifests", "machine-controller", f)); err != nil {
			return err
		}
	}
	user, err := e.env.AddUser(crenvtest.User{Name: ServiceAccount, Groups: []string{"system:serviceaccounts"}}, e.Config)
	if err != nil {
		return fmt.Errorf("adding user %s: %w", ServiceAccount, err)
	}
	e.ControllerConfig = user.Config()
	if err := e.publishClusterInfo(ctx); err != nil {
		return err
	}
	if err := e.publishNodeSettings(ctx); err != nil {
		return err
	}
	return e.serveWebhook()
}

// publishClusterInfo writes kube-public/cluster-info as kubeadm does, so that the controller
// reads the join endpoint and CA hash where it would in a real cluster, and lets anyone read it,
// as kubeadm's Role and RoleBinding kubeadm:bootstrap-signer-clusterinfo do for joining nodes.
func (e *Env) publishClusterInfo(ctx context.Context) error {
	const name = "kubeadm:bootstrap-signer-clusterinfo"
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespacePublic, Name: name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"cluster-info"}, Verbs: []string{"get"}}}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespacePublic, Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "system:anonymous"}}}
	for _, o := range []client.Object{role, binding} {
		if err := e.Client.Create(ctx, o); err != nil {
			return fmt.Errorf("creating kube-public %s: %w", name, err)
		}
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters[""] = &clientcmdapi.Cluster{Server: "https://" + strings.TrimPrefix(e.Config.Host, "https://"),
		CertificateAuthorityData: e.Config.CAData}
	raw, err := clientcmd.Write(*kc)
	if err != nil {
		return fmt.Errorf("encoding cluster-info: %w", err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespacePublic, Name: "cluster-info"},
		Data: map[string]string{"kubeconfig": string(raw)}}
	if err := e.Client.Create(ctx, cm); err != nil {
		return fmt.Errorf("creating kube-public/cluster-info: %w", err)
	}
	return nil
}

// NodeSettings are the node settings the shared environment starts with, as apply writes them
// for a minimal manifest at the newest Kubernetes version slipway supports.
func NodeSettings() bootstrap.Settings {
	return bootstrap.Settings{Cluster: v1beta1.Cluster{
		APIVersion: v1beta1.APIVersion, Kind: "Cluster", Name: "envtest",
		Versions:       v1beta1.Versions{Kubernetes: "v1.37.2"},
		ControlPlane:   v1beta1.ControlPlane{Hosts: []v1beta1.Host{{PrivateAddress: "10.0.0.10"}}},
		APIEndpoint:    v1beta1.APIEndpoint{Host: "10.0.0.10", Port: 6443},
		ClusterNetwork: v1beta1.ClusterNetwork{PodSubnet: "10.244.0.0/16", ServiceSubnet: "10.96.0.0/12", ServiceDomainName: "cluster.local"},
		CloudProvider:  v1beta1.CloudProvider{External: true},
		Assets:         v1beta1.Assets{Packages: &v1beta1.PackageAssets{BaseURL: "https://pkgs.k8s.io"}},
		ContainerRuntime: v1beta1.ContainerRuntime{Containerd: v1beta1.Containerd{
			Release: v1beta1.ContainerdRelease{BaseURL: v1beta1.DefaultContainerdReleaseURL}}},
	}}
}

// publishNodeSettings writes the node settings Secret as apply does, so that the controller
// renders user-data as it would in a real cluster.
func (e *Env) publishNodeSettings(ctx context.Context) error {
	data, err := NodeSettings().Marshal()
	if err != nil {
		return err
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: bootstrap.SettingsNamespace, Name: bootstrap.SettingsSecret},
		Data: map[string][]byte{bootstrap.SettingsKey: data}}
	if err := e.Client.Create(ctx, sec); err != nil {
		return fmt.Errorf("creating the node settings: %w", err)
	}
	return nil
}

// Admission is how the tests' webhook is configured: as the machine-controller configures it by
// default, with OpenStack's spec check under the default policy (without an OS_AUTH_URL, since
// every test's simulator has its own: every identityEndpoint is refused) and the controller's
// service account as the only user who may write spec.providerID and the state annotations.
var Admission = admission.Options{
	SpecChecks:  map[string]cloud.SpecCheck{"openstack": openstack.Policy{}.SpecCheck()},
	Controllers: []string{ServiceAccount},
}

// serveWebhook runs the admission webhook for the whole life of the environment, in a manager
// of its own, so that objects can be admitted while no controller runs.
func (e *Env) serveWebhook() error {
	wo := e.env.WebhookInstallOptions
	scheme, err := controller.Scheme()
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(e.Config, ctrl.Options{
		Scheme:        scheme,
		Metrics:       metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(webhook.Options{Host: wo.LocalServingHost, Port: wo.LocalServingPort, CertDir: wo.LocalServingCertDir}),
	})
	if err != nil {
		return fmt.Errorf("creating webhook manager: %w", err)
	}
	if err := admission.Setup(mgr, Admission); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.stopServer, e.serverDone = cancel, make(chan struct{})
	go func() {
		defer close(e.serverDone)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "webhook manager: %v\n", err)
		}
	}()
	// The webhook is up once the server answers TLS; the readiness checker polls for that.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := mgr.GetWebhookServer().StartedChecker()(nil); err == nil {
			return nil
		} else if time.Now().After(deadline) {
			return fmt.Errorf("webhook server on %s:%d did not start within 30s: %w", wo.LocalServingHost, wo.LocalServingPort, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (e *Env) stop() {
	if e.stopServer != nil {
		e.stopServer()
		<-e.serverDone
	}
	if err := e.env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping envtest: %v\n", err)
	}
}

func zapLevel() int8 {
	if os.Getenv("SLIPWAY_TEST_VERBOSE") != "" {
		return -2
	}
	return 2 // errors only: a passing run stays quiet
}

// User returns a config that authenticates as name in groups, with a client certificate.
func (e *Env) User(name string, groups ...string) (*rest.Config, error) {
	u, err := e.env.AddUser(crenvtest.User{Name: name, Groups: groups}, e.Config)
	if err != nil {
		return nil, fmt.Errorf("adding user %s: %w", name, err)
	}
	return u.Config(), nil
}

// WithoutAdmission runs fn with the webhook configurations removed, to see what the CRD schemas
// alone accept, and reinstalls them afterwards.
func (e *Env) WithoutAdmission(t testing.TB, fn func()) {
	t.Helper()
	ctx := context.Background()
	wo := e.env.WebhookInstallOptions
	var objs []client.Object
	for _, w := range wo.MutatingWebhooks {
		objs = append(objs, w.DeepCopy())
	}
	for _, w := range wo.ValidatingWebhooks {
		objs = append(objs, w.DeepCopy())
	}
	for _, o := range objs {
		if err := e.Client.Delete(ctx, o.DeepCopyObject().(client.Object)); err != nil {
			t.Fatalf("removing webhook configuration %s: %v", o.GetName(), err)
		}
	}
	defer func() {
		for _, o := range objs {
			o.SetResourceVersion("")
			o.SetUID("")
			if err := e.Client.Create(ctx, o); err != nil {
				t.Fatalf("reinstalling webhook configuration %s: %v", o.GetName(), err)
			}
		}
		e.waitAdmission(t, true)
	}()
	e.waitAdmission(t, false)
	fn()
}

var errorsJoin = errors.Join

// BinaryDir returns the directory holding kube-apiserver and etcd, for tests that start an
// environment of their own (one with other API server flags): KUBEBUILDER_ASSETS, or
// test/kube/build.sh's cache. The error says how to get them.
func BinaryDir() (string, error) { return binDir(repoRoot()) }
