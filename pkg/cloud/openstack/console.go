package openstack

import (
	"context"
	"errors"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

// Console returns the last lines of the console log of m's server (Nova's os-getConsoleOutput),
// read with the credentials m's spec resolves to: the environment's, unless the policy lets the
// spec name its own cloud. slipway reads it to say why a Machine did not join; the controller
// never does.
func (p *Provider) Console(ctx context.Context, m *v1alpha1.Machine, lines int) (string, error) {
	id := ""
	if m.Spec.ProviderID != nil {
		id, _ = strings.CutPrefix(*m.Spec.ProviderID, "openstack:///")
	}
	if id == "" {
		return "", errors.New("the Machine has no server yet (no spec.providerID)")
	}
	mc, err := p.prepare(ctx, m)
	if err != nil {
		return "", err
	}
	out, err := servers.ShowConsoleOutput(ctx, mc.compute, id, servers.ShowConsoleOutputOpts{Length: lines}).Extract()
	if err != nil {
		return "", classify(err, "reading the console log of server "+id)
	}
	return out, nil
}
