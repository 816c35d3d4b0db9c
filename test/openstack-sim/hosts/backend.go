// Package hosts is the OpenStack simulator's hypervisor: every server becomes a sandbox host (a
// Docker container of the sandbox node image running systemd, sshd, containerd and cloud-init)
// on a Docker network that stands for the server's Neutron network, with the port's fixed IP
// and MAC address and the server's hostname. It boots from a config drive seeded where
// cloud-init's ConfigDrive datasource reads it, so user-data runs as on a real cloud; its
// console is the container's terminal. Floating IPs are NAT rules on this machine, which plays
// the Neutron router: they are reachable from here and from the servers.
//
// Every Docker object carries the label dev.slipway.openstack=<cloud name>, and the NAT rules
// live in chains named after the cloud, so several clouds can run side by side and Down removes
// exactly one cloud's leftovers.
package hosts

import (
	"context"
	"fmt"
	"io"
	"maps"
	"regexp"
	"sync"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
	"github.com/slipway-dev/slipway/test/sandbox/sandboxapi"
)

// Labels of the Docker objects of a cloud.
const (
	Label        = "dev.slipway.openstack"
	labelServer  = Label + ".server"
	labelNetwork = Label + ".network"
)

// Options configure a Backend.
type Options struct {
	// Name of the cloud: part of every Docker object's name and label value, and of the NAT
	// chains. Lowercase letters and digits, at most 12 characters. Default "openstack".
	Name string
	// Image is the node image; default: built (or found) with test/sandbox/node/build.sh.
	Image string
	// Log receives one line per machine event. Default discards.
	Log io.Writer
	// ProviderNetworks map Neutron network names to existing Docker networks, as an OpenStack
	// provider network maps to a physical one: hosts on such a network sit beside whatever else
	// is on the Docker network (a sandbox's control planes, say). The Neutron subnet must have
	// the Docker network's CIDR and gateway, and an allocation pool that avoids the addresses
	// in use there. The backend never creates or removes these networks.
	ProviderNetworks map[string]string
}

// Backend runs servers as sandbox hosts. It implements openstacktest.Hypervisor.
type Backend struct {
	name, image string
	privileged  bool
	log         io.Writer
	netMu       sync.Mutex // serializes Docker network creation and removal
	nat         *nat
	provider    map[string]string // Neutron network name → Docker network
	lbMu        sync.Mutex        // guards lbApplied
	lbApplied   map[string]string // load balancer ID → hash of the configuration it runs
}

var _ openstacktest.Hypervisor = (*Backend)(nil)

var validName = regexp.MustCompile(`^[a-z][a-z0-9]{0,11}$`)

// New prepares a backend: it finds the node image and removes what an earlier run of the same
// cloud left behind (its records died with its process, so its hosts must go too).
func New(ctx context.Context, o Options) (*Backend, error) {
	if o.Name == "" {
		o.Name = "openstack"
	}
	if !validName.MatchString(o.Name) {
		return nil, fmt.Errorf("cloud name %q: want 1 to 12 lowercase letters and digits, starting with a letter", o.Name)
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Image == "" {
		img, err := NodeImage(ctx)
		if err != nil {
			return nil, err
		}
		o.Image = img
	}
	b := &Backend{name: o.Name, image: o.Image, privileged: sandboxapi.CanSetResources(), log: o.Log, nat: newNAT(o.Name),
		lbApplied: map[string]string{}, provider: maps.Clone(o.ProviderNetworks)}
	if err := Down(ctx, o.Name); err != nil {
		return nil, fmt.Errorf("removing what an earlier %s cloud left: %w", o.Name, err)
	}
	return b, nil
}

// Close removes every host, volume and network of the cloud and its NAT rules. The simulator's
// records go with its process, so its machines must not outlive it.
func (b *Backend) Close(ctx context.Context) error { return Down(ctx, b.name) }

// NodeImage builds or finds the sandbox node image and returns its reference.
func NodeImage(ctx context.Context) (string, error) {
	root, err := sandboxapi.RepoRoot()
	if err != nil {
		return "", err
	}
	out, err := sandboxapi.Run(ctx, nil, root+"/test/sandbox/node/build.sh")
	if err != nil {
		return "", fmt.Errorf("building the node image: %w", err)
	}
	return out, nil
}

// Down removes every Docker object labelled for the cloud and its NAT chains.
func Down(ctx context.Context, name string) error {
	filter := "label=" + Label + "=" + name
	out, err := sandboxapi.Docker(ctx, "ps", "-aq", "--filter", filter)
	if err != nil {
		return err
	}
	if ids := sandboxapi.Lines(out); len(ids) > 0 {
		if _, err := sandboxapi.Docker(ctx, append([]string{"rm", "-f", "-v"}, ids...)...); err != nil {
			return err
		}
	}
	for _, kind := range []string{"volume", "network"} {
		out, err := sandboxapi.Docker(ctx, kind, "ls", "-q", "--filter", filter)
		if err != nil {
			return err
		}
		if ids := sandboxapi.Lines(out); len(ids) > 0 {
			if _, err := sandboxapi.Docker(ctx, append([]string{kind, "rm", "-f"}, ids...)...); err != nil {
				return err
			}
		}
	}
	return newNAT(name).remove(ctx)
}

func (b *Backend) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "openstack-hosts: "+format+"\n", args...)
}
