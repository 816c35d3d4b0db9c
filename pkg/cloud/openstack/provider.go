package openstack

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
)

// Options tune a Provider. Apart from ClusterUID, the zero value is a sensible production
// setting.
type Options struct {
	// ClusterUID identifies the cluster (the controller uses the kube-system namespace's UID).
	// Every server is created with it in its metadata and tags, and every port and floating IP in
	// its description; nothing without it (and the Machine's UID) is ever deleted, and the orphan
	// sweep lists servers by it. Required.
	ClusterUID string
	// Policy is what the operator allows beyond the defaults (a Machine naming its own cloud,
	// plain http).
	Policy Policy
	// Resolver reads secretKeyRef and configMapKeyRef values; nil rejects references.
	Resolver Resolver
	// LookupEnv reads the controller's cloud configuration: the OS_* variables and OS_CACERT
	// (PEM, or the path of a PEM file); default os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Transport is the HTTP transport under the rate limiter; default a clone of
	// http.DefaultTransport that trusts OS_CACERT when it is set. A Transport given here must
	// trust the cloud's certificate itself; OS_CACERT is then an error.
	Transport http.RoundTripper
	// MaxResponseBytes bounds every response body read from the cloud; default 4 MiB.
	// MaxResponseValues bounds the JSON values in it; default 100,000. A hostile or broken
	// endpoint could otherwise grow the controller past its memory limit: responses are decoded
	// into generic maps first, at 50 times the bytes for a body of tiny values, so together they
	// keep one response under about 30 MiB of heap. Lists are paged to stay well within both
	// (a page of listPageSize servers of 5 KiB, with about 150 values each).
	MaxResponseBytes  int64
	MaxResponseValues int
	// DecodeBudget bounds the estimated heap of all the responses being decoded at once;
	// default 64 MiB, and never less than one response at both limits. Requests beyond it wait.
	DecodeBudget int64
	// QPS and Burst limit the requests to the cloud, across all machines; default 50 and 100.
	QPS   float64
	Burst int
	// MaxRetries bounds the retries of one request answered 429 or 503; default 5.
	MaxRetries int
	// RetryBackoff is the first wait before retrying without Retry-After (default 500ms), and
	// MaxRetryWait caps every wait (default 30s).
	RetryBackoff time.Duration
	MaxRetryWait time.Duration
	// LookupTTL is how long lookups (flavor, image, network, ...) are cached; default 1m.
	LookupTTL time.Duration
	// TokenRenewMargin renews a Keystone token this long before it expires; default 5m.
	TokenRenewMargin time.Duration
	// MaxCreateAttempts is how many servers a Machine may get when they go to ERROR before
	// the Machine fails; default 3.
	MaxCreateAttempts int
	// ErrorBackoff is the wait before replacing the first ERROR server; it doubles per attempt.
	// Default 10s.
	ErrorBackoff time.Duration
	// InstanceTTL is how long Get answers a running server from memory, and BuildingTTL a
	// building one (see instanceCache). Defaults: running servers are not cached (negative),
	// building ones for 2s; negative disables either.
	InstanceTTL time.Duration
	BuildingTTL time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Provider implements cloud.Provider for OpenStack.
type Provider struct {
	cluster  string
	owner    owner
	opts     Options
	sessions *sessions
	cache    *ttlCache
	records  *records
	volumes  *volumeSet
	running  *instanceCache
	owned    ownedServers
}

var _ cloud.Provider = (*Provider)(nil)

var (
	clusterNameRe = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,38}[a-z0-9])?$`)
	// clusterUIDRe keeps the UID fit for a Nova tag (no ',' or '/', at most 60 characters with
	// its prefix) and a Neutron description.
	clusterUIDRe = regexp.MustCompile(`^[A-Za-z0-9][-A-Za-z0-9]{0,35}$`)
)

// New returns a Provider that tags the servers it creates with clusterName and
// opts.ClusterUID.
func New(clusterName string, opts Options) (*Provider, error) {
	if !clusterNameRe.MatchString(clusterName) {
		return nil, fmt.Errorf("cluster name %q must be 1 to 40 lowercase letters, digits, '-' or '.'", clusterName)
	}
	if !clusterUIDRe.MatchString(opts.ClusterUID) {
		return nil, fmt.Errorf("cluster UID %q must be 1 to 36 letters, digits or '-' (the kube-system namespace's UID)", opts.ClusterUID)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&opts.RetryBackoff, 500*time.Millisecond)
	def(&opts.MaxRetryWait, 30*time.Second)
	def(&opts.LookupTTL, time.Minute)
	def(&opts.TokenRenewMargin, 5*time.Minute)
	def(&opts.ErrorBackoff, 10*time.Second)
	def(&opts.InstanceTTL, -1)
	def(&opts.BuildingTTL, 2*time.Second)
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	if opts.Policy.AuthURL == "" {
		// The Keystone this provider authenticates at is the one a spec may name.
		opts.Policy.AuthURL, _ = opts.LookupEnv("OS_AUTH_URL")
	}
	base, err := baseTransport(opts.Transport, opts.LookupEnv)
	if err != nil {
		return nil, err
	}
	if opts.MaxResponseBytes <= 0 {
		opts.MaxResponseBytes = 4 << 20
	}
	if opts.MaxResponseValues <= 0 {
		opts.MaxResponseValues = 100_000
	}
	if opts.DecodeBudget <= 0 {
		opts.DecodeBudget = 64 << 20
	}
	if opts.QPS == 0 {
		opts.QPS, opts.Burst = 50, 100
	}
	if opts.Burst == 0 {
		opts.Burst = int(opts.QPS) + 1
	}
	if opts.MaxRetries == 0 {
		opts.MaxRetries = 5
	}
	if opts.MaxCreateAttempts == 0 {
		opts.MaxCreateAttempts = 3
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	tr := &transport{base: base, limiter: rate.NewLimiter(rate.Limit(opts.QPS), opts.Burst),
		maxRetries: opts.MaxRetries, backoff: opts.RetryBackoff, maxWait: opts.MaxRetryWait,
		maxBody: opts.MaxResponseBytes, maxValues: opts.MaxResponseValues, allowHTTP: opts.Policy.AllowHTTP,
		decoding: newBudget(max(opts.DecodeBudget, decodeCost(int(opts.MaxResponseBytes), opts.MaxResponseValues)))}
	return &Provider{
		cluster: clusterName,
		owner:   owner{clusterUID: opts.ClusterUID},
		opts:    opts,
		sessions: &sessions{httpClient: http.Client{Transport: tr, Timeout: 2 * time.Minute},
			margin: opts.TokenRenewMargin, byKey: map[string]*session{}},
		cache:   newTTLCache(opts.LookupTTL, opts.Now),
		records: newRecords(),
		volumes: &volumeSet{},
		running: &instanceCache{runningTTL: opts.InstanceTTL, buildingTTL: opts.BuildingTTL, now: opts.Now,
			byUID: map[types.UID]cachedInstance{}},
	}, nil
}

// machine is one call's view of a Machine: its decoded spec and the session to its cloud.
type machine struct {
	m       *v1alpha1.Machine
	spec    *Spec
	s       *session
	compute *gophercloud.ServiceClient
	mv      int
}

var specPath = field.NewPath("spec", "providerSpec", "value", "cloudProviderSpec")

// decode reads and checks the Machine's providerSpec without the cloud.
func (p *Provider) decode(ctx context.Context, m *v1alpha1.Machine) (*Spec, credentials, error) {
	pc, err := v1alpha1.DecodeProviderConfig(m.Spec.ProviderSpec)
	if err != nil {
		return nil, credentials{}, invalid("%v", err)
	}
	if pc.CloudProvider != "openstack" {
		return nil, credentials{}, invalid("cloudProvider is %q; this provider serves openstack", pc.CloudProvider)
	}
	// What admission refuses is refused here again, before any reference is read: admission
	// can be bypassed (removed, or failing open), this cannot. slipway runs the same checks on
	// the specs it renders, before apply (ControllerCheck).
	spec, err := p.opts.Policy.checkedSpec(ctx, pc.CloudProviderSpec, m.Namespace, p.opts.Resolver, specPath)
	if err != nil {
		if _, isField := err.(interface{ Errors() []error }); isField {
			return nil, credentials{}, invalid("%v", err)
		}
		return nil, credentials{}, err
	}
	creds, errs := credentialsOf(spec, p.opts.LookupEnv, p.opts.Policy, specPath)
	if len(errs) > 0 {
		return nil, credentials{}, invalid("%v", errs.ToAggregate())
	}
	return spec, creds, nil
}

// prepare decodes the Machine's spec and opens (or reuses) the session to its cloud.
func (p *Provider) prepare(ctx context.Context, m *v1alpha1.Machine) (*machine, error) {
	spec, creds, err := p.decode(ctx, m)
	if err != nil {
		return nil, err
	}
	s, err := p.sessions.get(ctx, creds)
	if err != nil {
		return nil, err
	}
	mv := spec.microversion()
	return &machine{m: m, spec: spec, s: s, compute: s.computeAt(mv), mv: minor(mv)}, nil
}

// Resources says what a server of the template's spec brings: the flavor's vCPUs and RAM, and
// its root disk (the boot volume's size when the spec boots from one, else the flavor's disk).
// The flavor lookup is cached as Validate's is.
func (p *Provider) Resources(ctx context.Context, template *v1alpha1.Machine) (cloud.Resources, error) {
	mc, err := p.prepare(ctx, template)
	if err != nil {
		return cloud.Resources{}, err
	}
	f, err := p.flavor(ctx, mc.s, mc.spec.Flavor)
	if err != nil {
		return cloud.Resources{}, err
	}
	r := cloud.Resources{CPU: f.VCPUs, MemoryMiB: f.RAM, DiskGiB: f.Disk}
	if d := mc.spec.RootDiskSizeGB; d != nil && *d > 0 {
		r.DiskGiB = *d
	}
	return r, nil
}

// Validate checks the spec, the credentials and every object the spec names.
func (p *Provider) Validate(ctx context.Context, m *v1alpha1.Machine) error {
	mc, err := p.prepare(ctx, m)
	if err != nil {
		return err
	}
	_, err = p.resolve(ctx, mc.s, mc.spec)
	return err
}
