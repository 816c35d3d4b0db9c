// Command machine-controller runs inside the cluster and reconciles cluster.k8s.io/v1alpha1
// MachineDeployments, MachineSets and Machines into cloud servers that join as Nodes. This file
// only turns flags into options; everything else lives in pkg/controller.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/slipway-dev/slipway/pkg/cloud"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack"
	"github.com/slipway-dev/slipway/pkg/controller"
	"github.com/slipway-dev/slipway/pkg/version"
	admission "github.com/slipway-dev/slipway/pkg/webhook"
)

// stringList is a repeatable flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error {
	if v == "" {
		return fmt.Errorf("must not be empty")
	}
	*l = append(*l, v)
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "machine-controller:", err)
		os.Exit(1)
	}
}

// settings are what the flags set.
type settings struct {
	o            controller.Options
	mo           controller.ManagerOptions
	cloudName    string
	clusterUID   string
	stateWriters stringList
	certSecret   string
	maxUnhealthy string
	qps          float64
	zap          zap.Options
}

// register adds every flag to fs, each with its help text.
func register(fs *flag.FlagSet) *settings {
	st := &settings{}
	o, mo := &st.o, &st.mo
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: machine-controller [flags]\n\n"+
			"Reconciles cluster.k8s.io/v1alpha1 MachineDeployments, MachineSets and Machines into cloud servers\n"+
			"that join the cluster as Nodes, and serves their admission webhook. Flags:\n\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&st.cloudName, "cloud-provider", "openstack", "cloud that servers are created in; only openstack is supported")
	fs.StringVar(&o.ClusterName, "cluster-name", "slipway", "name servers are tagged with, for people to read")
	fs.Var(&st.stateWriters, "provider-state-writer", "user besides the controller itself who may set a Machine's spec.providerID and provider state annotations, e.g. a backup tool that restores Machines (repeatable)")
	fs.StringVar(&st.clusterUID, "cluster-uid", "", "UID servers are marked with; the orphan sweep and deletions touch only servers with it (default: the UID of the kube-system namespace)")
	fs.StringVar(&o.Namespace, "namespace", "", "watch Machines, MachineSets and MachineDeployments in this namespace only (default: all namespaces); the orphan sweep then deletes only servers its own forced deletions left")
	fs.IntVar(&o.Workers, "workers", 10, "concurrent reconciles per controller")
	fs.Float64Var(&st.qps, "kube-api-qps", 20, "requests per second to the Kubernetes API")
	fs.IntVar(&mo.Burst, "kube-api-burst", 40, "request burst to the Kubernetes API")
	fs.DurationVar(&o.JoinTimeout, "join-timeout", 15*time.Minute, "replace a Machine whose Node has not joined this long after the Machine was created (or after the cloud accepted its server, when it waited for quota)")
	fs.DurationVar(&o.UnhealthyTimeout, "unhealthy-timeout", 10*time.Minute, "replace a Machine whose Node has been NotReady this long")
	fs.StringVar(&st.maxUnhealthy, "max-unhealthy", "40%", "most Machines of one MachineDeployment replaced for health at a time (number or percentage of replicas, at least 1); above it none are")
	fs.DurationVar(&o.DrainTimeout, "drain-timeout", 15*time.Minute, "give up evicting pods after this long and delete the Machine anyway")
	fs.DurationVar(&o.ForcedDeleteTimeout, "forced-delete-timeout", 2*time.Minute, "with deletion policy forced, release the Machine after waiting this long for the cloud")
	fs.IntVar(&o.OvershootThreshold, "overshoot-threshold", 1, "freeze a MachineSet that has this many Machines more than its replicas")
	fs.DurationVar(&o.PollInterval, "poll-interval", 5*time.Second, "how often servers being built or deleted and blocked drains are checked")
	fs.DurationVar(&o.ProbeInterval, "api-probe-interval", 10*time.Second, "how often the API server's /readyz is asked; health-based replacement freezes after three failures in a row, and while the cloud's API fails")
	fs.DurationVar(&o.CapacityRetryMax, "capacity-retry-max", 30*time.Second, "longest wait between attempts to create a server that the cloud refused for quota or capacity (the wait starts at --poll-interval and doubles)")
	fs.DurationVar(&o.OrphanSweepInterval, "orphan-sweep-interval", 5*time.Minute, "how often to look for tagged servers without a Machine; negative disables the sweep")
	fs.DurationVar(&o.OrphanGracePeriod, "orphan-grace-period", 10*time.Minute, "delete a server only after it has had no Machine for this long")
	fs.StringVar(&o.LeftoverNamespace, "leftover-namespace", "kube-system", "namespace of the ConfigMap that records servers left behind by forced deletions")
	fs.StringVar(&o.Join.Endpoint, "join-api-endpoint", "", "API server host:port new nodes join through (default: from kube-public/cluster-info)")
	fs.StringVar(&o.Join.CACertHash, "join-ca-cert-hash", "", "sha256:<hex> pin of the cluster CA for kubeadm join (default: from kube-public/cluster-info)")
	fs.StringVar(&mo.MetricsAddr, "metrics-bind-address", ":8443", "address of the Prometheus metrics endpoint (https, for bearer tokens the API server authorizes for GET /metrics); 0 disables it")
	fs.BoolVar(&mo.MetricsInsecure, "metrics-insecure", false, "serve metrics over plain http to anyone who can reach them, instead of behind the API server's authentication and authorization")
	fs.StringVar(&mo.ProbeAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz; 0 disables them")
	fs.IntVar(&mo.WebhookPort, "webhook-port", 9443, "port of the admission webhook (TLS); 0 disables it")
	fs.StringVar(&mo.WebhookCertDir, "webhook-cert-dir", "/etc/machine-controller/tls", "directory with the webhook's tls.crt and tls.key")
	fs.StringVar(&st.certSecret, "webhook-cert-secret", "kube-system/machine-controller-webhook-tls", "namespace/name of the Secret with the webhook's certificate, which the leader renews when a third of its lifetime is left; empty disables the renewal")
	fs.StringVar(&mo.WebhookConfiguration, "webhook-configuration", "machine-controller", "name of the Mutating- and ValidatingWebhookConfiguration whose caBundle trusts the webhook's certificate")
	fs.BoolVar(&mo.LeaderElection, "leader-elect", true, "run only while holding the leader Lease, so that one replica reconciles at a time")
	fs.StringVar(&mo.LeaderElectionNamespace, "leader-election-namespace", "kube-system", "namespace of the leader Lease")
	fs.StringVar(&mo.LeaderElectionID, "leader-election-id", "machine-controller", "name of the leader Lease (the RBAC in manifests/ lets the controller update only the Lease machine-controller)")
	fs.DurationVar(&mo.SyncPeriod, "sync-period", 10*time.Minute, "reconcile every object at least this often, which bounds how late a server deleted out of band is noticed")
	st.zap.BindFlags(fs)
	return st
}

func run() error {
	st := register(flag.CommandLine)
	showVersion := flag.Bool("version", false, "print the version (slipway's, which tags the image) and exit")
	// --kubeconfig is registered by controller-runtime's config package.
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %v", flag.Args())
	}
	if *showVersion {
		fmt.Println("machine-controller", version.Get().Version)
		return nil
	}
	o, mo := st.o, st.mo
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&st.zap)))
	if st.certSecret != "" {
		ns, name, ok := strings.Cut(st.certSecret, "/")
		if !ok || ns == "" || name == "" {
			return fmt.Errorf("--webhook-cert-secret %q: want namespace/name", st.certSecret)
		}
		mo.WebhookCertSecret = types.NamespacedName{Namespace: ns, Name: name}
	}
	mo.QPS = float32(st.qps)
	o.MaxUnhealthy = intstr.Parse(st.maxUnhealthy)
	if st.cloudName != "openstack" {
		return fmt.Errorf("--cloud-provider %q is not supported: only openstack", st.cloudName)
	}

	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	scheme, err := controller.Scheme()
	if err != nil {
		return err
	}
	// The provider reads credentials that cloudProviderSpec references from Secrets and
	// ConfigMaps, directly: the controller never caches Secrets.
	reader, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("creating API client: %w", err)
	}
	ctx := ctrl.SetupSignalHandler()
	if st.clusterUID == "" {
		if st.clusterUID, err = controller.ClusterUID(ctx, reader); err != nil {
			return err
		}
	}
	// The cloud, its credentials and what Machines may choose come from the environment, which
	// the credentials Secret that slipway apply writes fills in.
	policy, err := openstack.PolicyFromEnv(os.LookupEnv)
	if err != nil {
		return err
	}
	provider, err := openstack.New(o.ClusterName, openstack.Options{ClusterUID: st.clusterUID, Policy: policy,
		Resolver: openstack.ClientResolver{Reader: reader}})
	if err != nil {
		return fmt.Errorf("creating the OpenStack provider: %w", err)
	}
	// Admission refuses what a Machine may not choose under the policy, and lets only this
	// process's own user (and the operator's --provider-state-writers) write the fields that
	// name cloud resources.
	self, err := controller.ControllerUser(ctx, cfg)
	if err != nil {
		return err
	}
	mo.Admission = admission.Options{
		SpecChecks:  map[string]cloud.SpecCheck{"openstack": policy.SpecCheck()},
		Controllers: append([]string{self}, st.stateWriters...),
	}
	mgr, err := controller.NewManager(ctx, cfg, provider, o, mo)
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}
