package openstack

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	gcopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"golang.org/x/sync/singleflight"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
)

// session is one authenticated client per credential set, with its service endpoints. The
// token is renewed shortly before it expires (and by gophercloud on a 401), never per call.
type session struct {
	key     string
	pc      *gophercloud.ProviderClient
	compute *gophercloud.ServiceClient
	network *gophercloud.ServiceClient
	image   *gophercloud.ServiceClient
	eo      gophercloud.EndpointOpts

	mu      sync.Mutex
	volume  *gophercloud.ServiceClient
	token   string
	expires time.Time
}

// sessions caches sessions by credential key.
type sessions struct {
	httpClient http.Client
	margin     time.Duration
	mu         sync.Mutex
	byKey      map[string]*session
	group      singleflight.Group
}

// get returns the session for c, authenticating once for all concurrent callers.
func (ss *sessions) get(ctx context.Context, c credentials) (*session, error) {
	key := c.key()
	ss.mu.Lock()
	s := ss.byKey[key]
	ss.mu.Unlock()
	if s != nil {
		return s, s.refresh(ctx, ss.margin)
	}
	v, err, _ := ss.group.Do(key, func() (any, error) {
		s, err := ss.open(ctx, c, key)
		if err != nil {
			return nil, err
		}
		ss.mu.Lock()
		ss.byKey[key] = s
		ss.mu.Unlock()
		return s, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*session), nil
}

func (ss *sessions) open(ctx context.Context, c credentials, key string) (*session, error) {
	opts := c.authOptions()
	pc, err := gcopenstack.NewClient(opts.IdentityEndpoint)
	if err != nil {
		return nil, classify(err, "parsing the identity endpoint")
	}
	pc.HTTPClient = ss.httpClient
	pc.UserAgent.Prepend("slipway-machine-controller")
	if err := gcopenstack.Authenticate(ctx, pc, opts); err != nil {
		return nil, classify(err, fmt.Sprintf("authenticating at %s", opts.IdentityEndpoint))
	}
	s := &session{key: key, pc: pc, eo: gophercloud.EndpointOpts{Region: c.Region}}
	for _, svc := range []struct {
		name string
		dst  **gophercloud.ServiceClient
		mk   func(*gophercloud.ProviderClient, gophercloud.EndpointOpts) (*gophercloud.ServiceClient, error)
	}{
		{"compute", &s.compute, gcopenstack.NewComputeV2},
		{"network", &s.network, gcopenstack.NewNetworkV2},
		{"image", &s.image, gcopenstack.NewImageV2},
	} {
		if *svc.dst, err = svc.mk(pc, s.eo); err != nil {
			if regions := catalogRegions(pc); c.Region != "" && !slices.Contains(regions, c.Region) {
				return nil, cloud.Terminal(v1alpha1.InvalidConfigurationMachineError,
					"region %q is not in the service catalog of %s, which has %s: cloudProviderSpec.region must name one of them "+
						"(or be left out for OS_REGION_NAME)", c.Region, opts.IdentityEndpoint, quotedList(regions))
			}
			return nil, classify(err, fmt.Sprintf("finding the %s endpoint in region %q", svc.name, c.Region))
		}
	}
	s.noteToken()
	return s, nil
}

// catalogRegions lists the regions of the catalog that Keystone returned with pc's token, sorted.
func catalogRegions(pc *gophercloud.ProviderClient) []string {
	r, ok := pc.GetAuthResult().(tokens.CreateResult)
	if !ok {
		return nil
	}
	cat, err := r.ExtractServiceCatalog()
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range cat.Entries {
		for _, ep := range e.Endpoints {
			if ep.Region != "" && !slices.Contains(out, ep.Region) {
				out = append(out, ep.Region)
			}
		}
	}
	slices.Sort(out)
	return out
}

// quotedList is "regions "a", "b"", or "no regions".
func quotedList(vs []string) string {
	if len(vs) == 0 {
		return "no regions"
	}
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = strconv.Quote(v)
	}
	return "regions " + strings.Join(q, ", ")
}

// volumeClient is made on first use: clouds without Cinder work as long as nothing boots from
// a volume.
func (s *session) volumeClient() (*gophercloud.ServiceClient, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.volume != nil {
		return s.volume, nil
	}
	v, err := gcopenstack.NewBlockStorageV3(s.pc, s.eo)
	if err != nil {
		return nil, classify(err, fmt.Sprintf("finding the block-storage endpoint in region %q", s.eo.Region))
	}
	s.volume = v
	return v, nil
}

// computeAt returns a compute client that requests microversion mv.
func (s *session) computeAt(mv string) *gophercloud.ServiceClient {
	c := *s.compute
	c.Microversion = mv
	return &c
}

// noteToken remembers the current token's expiry.
func (s *session) noteToken() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = s.pc.Token()
	s.expires = time.Time{}
	if r, ok := s.pc.GetAuthResult().(tokens.CreateResult); ok {
		if t, err := r.ExtractToken(); err == nil {
			s.expires = t.ExpiresAt
		}
	}
}

// refresh re-authenticates when the token expires within margin. Concurrent callers share one
// re-authentication (gophercloud skips it when the token has already changed).
func (s *session) refresh(ctx context.Context, margin time.Duration) error {
	s.mu.Lock()
	token, expires := s.token, s.expires
	s.mu.Unlock()
	if token != s.pc.Token() {
		s.noteToken() // renewed by gophercloud after a 401
		return nil
	}
	if expires.IsZero() || time.Until(expires) > margin {
		return nil
	}
	if err := s.pc.Reauthenticate(ctx, token); err != nil {
		return classify(err, "renewing the Keystone token")
	}
	s.noteToken()
	return nil
}
