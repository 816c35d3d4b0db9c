package openstacktest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
)

// ProjectClient is a gophercloud client authenticated as the project's user (Username in
// ProjectName), as an operator's openrc would make it. Over https it trusts the Sim's CA and
// nothing else, as a client given OS_CACERT does.
func (s *Sim) ProjectClient(ctx context.Context) (*gophercloud.ProviderClient, error) {
	pc, err := openstack.NewClient(s.AuthURL())
	if err != nil {
		return nil, err
	}
	if ca := s.CACert(); ca != nil {
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(ca) {
			return nil, fmt.Errorf("the simulator's CA is not PEM")
		}
		pc.HTTPClient = http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
	}
	err = openstack.Authenticate(ctx, pc, gophercloud.AuthOptions{IdentityEndpoint: s.AuthURL(),
		Username: Username, Password: Password, DomainName: DomainName, TenantName: ProjectName})
	if err != nil {
		return nil, fmt.Errorf("authenticating to the simulator as %s: %w", Username, err)
	}
	return pc, nil
}
