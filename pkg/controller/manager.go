package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/bootstrap"
	"github.com/slipway-dev/slipway/pkg/cloud"
	"github.com/slipway-dev/slipway/pkg/controller/csrapprover"
	"github.com/slipway-dev/slipway/pkg/controller/health"
	"github.com/slipway-dev/slipway/pkg/controller/internal/cloudtrack"
	"github.com/slipway-dev/slipway/pkg/controller/internal/index"
	"github.com/slipway-dev/slipway/pkg/controller/machine"
	"github.com/slipway-dev/slipway/pkg/controller/machinedeployment"
	"github.com/slipway-dev/slipway/pkg/controller/machineset"
	"github.com/slipway-dev/slipway/pkg/controller/orphans"
	admission "github.com/slipway-dev/slipway/pkg/webhook"
)

// The webhook certificate's renewal (webhook.Rotator) reads and writes only its own Secret and
// webhook configurations.
// +kubebuilder:rbac:groups="",namespace=kube-system,resources=secrets,resourceNames=machine-controller-webhook-tls,verbs=get;update
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations;validatingwebhookconfigurations,resourceNames=machine-controller,verbs=get;update
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=kube-system,resources=leases,verbs=create
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=kube-system,resources=leases,resourceNames=machine-controller,verbs=get;update

// ManagerOptions are the process-level settings of the machine-controller.
type ManagerOptions struct {
	// MetricsAddr is where Prometheus metrics are served; "0" disables them.
	MetricsAddr string
	// MetricsInsecure serves metrics over plain http to anyone who can reach MetricsAddr.
	// Otherwise they are served over https (a self-signed certificate unless MetricsCertDir
	// holds tls.crt and tls.key) to clients whose bearer token the API server authenticates
	// and authorizes for GET /metrics (see manifests/machine-controller/metrics-reader.yaml).
	MetricsInsecure bool
	MetricsCertDir  string
	// ProbeAddr serves /healthz and /readyz; "0" disables them.
	ProbeAddr string
	// WebhookPort serves the admission webhook over TLS; 0 disables it.
	WebhookPort int
	// WebhookHost is the address the webhook listens on; empty means all.
	WebhookHost string
	// WebhookCertDir holds tls.crt and tls.key for the webhook.
	WebhookCertDir string
	// Admission configures the webhook: the providers' spec checks and the users who count as
	// the controller (see ControllerUser).
	Admission admission.Options
	// WebhookCertSecret, when set, is the Secret with the webhook's certificate, which the
	// leader renews before it expires (webhook.Rotator), keeping the caBundle of the webhook
	// configurations named WebhookConfiguration in step. WebhookCertCheckInterval is how often
	// it looks; default an hour.
	WebhookCertSecret        types.NamespacedName
	WebhookConfiguration     string
	WebhookCertCheckInterval time.Duration
	// LeaderElection makes only one replica reconcile, through a Lease.
	LeaderElection bool
	// LeaderElectionNamespace and LeaderElectionID name the Lease.
	LeaderElectionNamespace, LeaderElectionID string
	// QPS and Burst limit the client's requests to the API server.
	QPS   float32
	Burst int
	// SkipNameValidation allows several managers in one process, as tests start them.
	SkipNameValidation bool
	// SyncPeriod is how often every object is reconciled even without a change, which is when a
	// server deleted out of band is noticed at the latest.
	SyncPeriod time.Duration
}

// Scheme returns a scheme with the built-in types and cluster.k8s.io/v1alpha1.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

// NewManager builds the machine-controller: a controller-runtime manager running every
// reconciler of this package against provider, plus the admission webhook when mo.WebhookPort is
// set. Run it with Start.
func NewManager(ctx context.Context, cfg *rest.Config, provider cloud.Provider, opts Options, mo ManagerOptions) (manager.Manager, error) {
	cfg = rest.CopyConfig(cfg)
	if mo.QPS > 0 {
		cfg.QPS, cfg.Burst = mo.QPS, mo.Burst
	}
	scheme, err := Scheme()
	if err != nil {
		return nil, fmt.Errorf("building scheme: %w", err)
	}
	// The cache keeps every Machine and Node; managedFields and a Node's image list are most of
	// their bytes and nothing here reads them.
	co := cache.Options{DefaultTransform: stripForCache}
	if mo.SyncPeriod > 0 {
		co.SyncPeriod = &mo.SyncPeriod
	}
	if opts.Namespace != "" {
		only := map[string]cache.Config{opts.Namespace: {}}
		co.ByObject = map[client.Object]cache.ByObject{
			&v1alpha1.Machine{}: {Namespaces: only}, &v1alpha1.MachineSet{}: {Namespaces: only},
			&v1alpha1.MachineDeployment{}: {Namespaces: only},
		}
	}
	mgrOpts := ctrl.Options{
		Scheme:                        scheme,
		Cache:                         co,
		Metrics:                       metricsOptions(mo),
		HealthProbeBindAddress:        mo.ProbeAddr,
		LeaderElection:                mo.LeaderElection,
		LeaderElectionNamespace:       mo.LeaderElectionNamespace,
		LeaderElectionID:              mo.LeaderElectionID,
		LeaderElectionReleaseOnCancel: true,
		Controller:                    config.Controller{SkipNameValidation: &mo.SkipNameValidation},
		// Secrets, ConfigMaps and Pods are read directly when needed, never cached: caching them
		// would cost memory in proportion to the whole cluster.
		Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{
			&corev1.Secret{}, &corev1.ConfigMap{}, &corev1.Pod{}}}},
	}
	if mo.WebhookPort > 0 {
		mgrOpts.WebhookServer = webhook.NewServer(webhook.Options{Host: mo.WebhookHost, Port: mo.WebhookPort, CertDir: mo.WebhookCertDir})
	}
	mgr, err := ctrl.NewManager(cfg, mgrOpts)
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	if err := Setup(ctx, mgr, cfg, provider, opts); err != nil {
		return nil, err
	}
	if mo.WebhookPort > 0 {
		if err := admission.Setup(mgr, mo.Admission); err != nil {
			return nil, err
		}
	}
	if mo.WebhookCertSecret.Name != "" {
		hooks := []string{mo.WebhookConfiguration}
		err := mgr.Add(&admission.Rotator{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Secret: mo.WebhookCertSecret,
			Mutating: hooks, Validating: hooks, Interval: mo.WebhookCertCheckInterval,
			Log: mgr.GetLogger().WithName("webhook-certificate")})
		if err != nil {
			return nil, fmt.Errorf("adding the webhook certificate renewal: %w", err)
		}
	}
	if mo.ProbeAddr != "" && mo.ProbeAddr != "0" {
		ready := healthz.Ping
		if mo.WebhookPort > 0 {
			ready = mgr.GetWebhookServer().StartedChecker()
		}
		if err := errors.Join(mgr.AddHealthzCheck("ping", healthz.Ping), mgr.AddReadyzCheck("ready", ready)); err != nil {
			return nil, fmt.Errorf("adding probes: %w", err)
		}
	}
	return mgr, nil
}

// Setup adds the controllers, the health replacement, the orphan sweep and the API probe to mgr.
// Tests use it to run the controllers against any cloud.Provider.
func Setup(ctx context.Context, mgr manager.Manager, cfg *rest.Config, provider cloud.Provider, opts Options) error {
	opts = opts.Defaults()
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating clientset: %w", err)
	}
	if err := index.Add(ctx, mgr); err != nil {
		return err
	}
	registerMetrics(mgr.GetClient())
	tracked := cloudtrack.New(provider)
	recorder := mgr.GetEventRecorderFor("machine-controller")
	c, reader := mgr.GetClient(), mgr.GetAPIReader()
	log := mgr.GetLogger().WithName("machine-controller")
	probe := &apiProbe{client: kube.Discovery().RESTClient(), interval: opts.ProbeInterval, log: log}
	frozen := replacementFrozen(probe, tracked)
	mr := machine.New(c, reader, kube, tracked, recorder, machine.Options{Workers: opts.Workers, JoinTimeout: opts.JoinTimeout,
		UnhealthyTimeout: opts.UnhealthyTimeout, DrainTimeout: opts.DrainTimeout, ForcedDeleteTimeout: opts.ForcedDeleteTimeout,
		PollInterval: opts.PollInterval, CapacityRetryMax: opts.CapacityRetryMax, LeftoverNamespace: opts.LeftoverNamespace,
		Join: bootstrap.ClusterInfo{Endpoint: opts.Join.Endpoint, CACertHash: opts.Join.CACertHash}})
	steps := []struct {
		name string
		err  func() error
	}{
		{"machine controller", func() error { return mr.SetupWithManager(mgr) }},
		{"machineset controller", func() error {
			return machineset.New(c, recorder, machineset.Options{Workers: opts.Workers, OvershootThreshold: opts.OvershootThreshold}).
				SetupWithManager(mgr)
		}},
		{"machinedeployment controller", func() error {
			resources, _ := provider.(cloud.ResourceReader)
			return machinedeployment.New(c, recorder, machinedeployment.Options{Workers: opts.Workers, Resources: resources}).SetupWithManager(mgr)
		}},
		{"health controller", func() error {
			return health.New(c, recorder, health.Options{PollInterval: opts.PollInterval, MaxUnhealthy: opts.MaxUnhealthy}, frozen).
				SetupWithManager(mgr)
		}},
		{"csr approver", func() error { return csrapprover.New(c, kube, recorder).SetupWithManager(mgr) }},
		{"api probe", func() error { return mgr.Add(probe) }},
		{"orphan sweep", func() error {
			if opts.OrphanSweepInterval < 0 {
				return nil
			}
			return mgr.Add(orphans.NewSweeper(c, reader, tracked, orphans.Options{Namespace: opts.Namespace,
				LeftoverNamespace: opts.LeftoverNamespace, OrphanSweepInterval: opts.OrphanSweepInterval,
				OrphanGracePeriod: opts.OrphanGracePeriod}, log))
		}},
	}
	for _, s := range steps {
		if err := s.err(); err != nil {
			return fmt.Errorf("setting up the %s: %w", s.name, err)
		}
	}
	return nil
}

// stripForCache drops what no reconciler reads from cached objects.
func stripForCache(obj any) (any, error) {
	if o, ok := obj.(client.Object); ok {
		o.SetManagedFields(nil)
	}
	if n, ok := obj.(*corev1.Node); ok {
		n.Status.Images = nil
	}
	return obj, nil
}
