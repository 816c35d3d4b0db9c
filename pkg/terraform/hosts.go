package terraform

import (
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/internal/plural"
)

// The address lists of a host group, by their names in the output.
const (
	publicAddress  = "public_address"
	privateAddress = "private_address"
)

// count is the number of hosts in the group and the list that says so: public_address, or
// private_address when public_address is empty (hosts reached through the bastion only).
func (g *HostGroup) count() (int, string) {
	if len(g.PublicAddress) > 0 {
		return len(g.PublicAddress), publicAddress
	}
	return len(g.PrivateAddress), privateAddress
}

// hosts expands a host group into manifest hosts. Host i is
//   - dialled (directly, or through the bastion when the group has one) at public_address[i],
//     or at private_address[i] when it has no public address (public_address is empty, or its
//     entry i is ""); the manifest host's publicAddress is that address;
//   - known to the cluster at private_address[i], or at its public address when there is no
//     private one: the manifest host's privateAddress, which kubeadm advertises and the kubelet
//     uses as its node IP;
//   - named hostnames[i] and pinned to ssh_host_keys[i], when those lists are given.
//
// Every list that is given has one entry per host: a list of another length is an error that
// names it, as is a host with no address at all.
func (g *HostGroup) hosts(p *field.Path) ([]v1beta1.Host, field.ErrorList) {
	n, by := g.count()
	var errs field.ErrorList
	for _, l := range []struct {
		name string
		len  int
	}{{publicAddress, len(g.PublicAddress)}, {privateAddress, len(g.PrivateAddress)}, {"hostnames", len(g.Hostnames)}, {"ssh_host_keys", len(g.SSHHostKeys)}} {
		switch {
		case l.name == by || l.len == 0 || l.len == n:
		case n == 0:
			errs = append(errs, field.Invalid(p.Child(l.name), plural.Count(l.len, "entry", "entries"),
				"but neither public_address nor private_address lists a host"))
		default:
			errs = append(errs, field.Invalid(p.Child(l.name), plural.Count(l.len, "entry", "entries"),
				fmt.Sprintf("must have one entry per %s (%d)", by, n)))
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	errs = append(errs, g.kubeone.check(g, p)...)
	hosts := make([]v1beta1.Host, 0, n)
	for i := range n {
		public, private := at(g.PublicAddress, i), at(g.PrivateAddress, i)
		dial := public
		if dial == "" {
			dial = private
		}
		if dial == "" {
			errs = append(errs, field.Required(p.Child(by).Index(i),
				fmt.Sprintf("host %d has neither a public nor a private address", i+1)))
			continue
		}
		h := v1beta1.Host{
			PublicAddress:     dial,
			PrivateAddress:    private,
			Hostname:          at(g.Hostnames, i),
			SSHHostPublicKey:  at(g.SSHHostKeys, i),
			SSHUsername:       g.SSHUser,
			SSHPort:           g.SSHPort,
			SSHPrivateKeyFile: g.SSHPrivateKeyFile,
			SSHAgentSocket:    g.SSHAgentSocket,
			Labels:            maps.Clone(g.Labels),
		}
		if len(g.Taints) > 0 { // an empty list, as Terraform writes "none", keeps the default taints
			h.Taints = slices.Clone(g.Taints)
		}
		if g.Bastion != "" {
			h.Bastion = &v1beta1.Bastion{Address: g.Bastion, Port: g.BastionPort, User: g.BastionUser, HostPublicKey: g.BastionHostKey}
		}
		g.kubeone.apply(&h, public, private)
		hosts = append(hosts, h)
	}
	return hosts, errs
}

// hasAddresses reports whether the group lists any host.
func (g *HostGroup) hasAddresses() bool {
	n, _ := g.count()
	return n > 0
}

// at returns list[i], or "" for an empty list.
func at(list []string, i int) string {
	if i < len(list) {
		return list[i]
	}
	return ""
}

// staticWorkerHosts reports whether any group of slipway_static_workers lists a host.
func (o *Output) staticWorkerHosts() bool {
	for _, g := range o.StaticWorkers {
		if g.hasAddresses() {
			return true
		}
	}
	return false
}
