package sandboxapi

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"time"
)

// Stop shuts a host down the way a machine powers off (systemd gets SIGRTMIN+3), keeping its
// disk, address and identity: it comes back with Start. For repair tests.
func (sb *Sandbox) Stop(ctx context.Context, name string) error {
	h, err := sb.node(name)
	if err != nil {
		return err
	}
	_, err = docker(ctx, "stop", "--time", "30", h.Container)
	return err
}

// Start boots a stopped host and waits until it is reachable again.
func (sb *Sandbox) Start(ctx context.Context, name string) error {
	h, err := sb.node(name)
	if err != nil {
		return err
	}
	if _, err := docker(ctx, "start", h.Container); err != nil {
		return err
	}
	return sb.waitHost(ctx, h)
}

// Destroy removes a host's container and its containerd volume, as if the machine were lost. The
// host stays in the state (its address is reserved) until Recreate or RemoveHost.
func (sb *Sandbox) Destroy(ctx context.Context, name string) error {
	h, err := sb.node(name)
	if err != nil {
		return err
	}
	if _, err := docker(ctx, "rm", "-f", "-v", h.Container); err != nil {
		return err
	}
	return removeVolume(ctx, volumeName(h))
}

// Recreate replaces a host by a bare one at the same address: no Kubernetes, empty disk. With
// newIdentity the new machine also gets a new SSH host key and machine-id, as a real replacement
// would; tf.json and known_hosts are rewritten either way. It waits until the host is reachable.
func (sb *Sandbox) Recreate(ctx context.Context, name string, newIdentity bool) error {
	if err := sb.Destroy(ctx, name); err != nil {
		return err
	}
	if newIdentity {
		if err := sb.forgetIdentity(name); err != nil {
			return err
		}
	}
	return sb.startNode(ctx, name)
}

// AddHost creates a bare host outside the original plan, at the first free address from .100
// up, for example a server the OpenStack simulator boots. It returns the host once reachable.
func (sb *Sandbox) AddHost(ctx context.Context, name string, role Role) (Host, error) {
	if !validName(name) || role == LoadBalancer {
		return Host{}, fmt.Errorf("adding host %q (%s): want a lowercase DNS label and a node role", name, role)
	}
	if _, ok := sb.Host(name); ok {
		return Host{}, fmt.Errorf("adding host %s: a host of that name exists", name)
	}
	subnet, err := netip.ParsePrefix(sb.Subnet)
	if err != nil {
		return Host{}, err
	}
	sb.mu.Lock()
	ip := ""
	used := map[string]bool{}
	for _, h := range sb.Hosts {
		used[h.IP] = true
	}
	for o := extraFirst; o <= extraLast && ip == ""; o++ {
		if a := addr(subnet, o); !used[a] {
			ip = a
		}
	}
	if ip != "" {
		sb.Hosts = append(sb.Hosts, Host{Name: name, Role: role, IP: ip, Container: containerName(sb.Name, name)})
	}
	sb.mu.Unlock()
	if ip == "" {
		return Host{}, fmt.Errorf("adding host %s: no free address in %s between .%d and .%d", name, sb.Subnet, extraFirst, extraLast)
	}
	if err := sb.startNode(ctx, name); err != nil {
		return Host{}, err
	}
	h, _ := sb.Host(name)
	return h, nil
}

// RemoveHost destroys a host and forgets it, identity included.
func (sb *Sandbox) RemoveHost(ctx context.Context, name string) error {
	if err := sb.Destroy(ctx, name); err != nil {
		return err
	}
	sb.mu.Lock()
	defer sb.mu.Unlock()
	for i, h := range sb.Hosts {
		if h.Name == name {
			sb.Hosts = append(sb.Hosts[:i], sb.Hosts[i+1:]...)
			break
		}
	}
	if err := sb.forgetIdentity(name); err != nil {
		return err
	}
	return sb.writeFiles(ctx)
}

// startNode creates a planned host's container if missing, records its identity and the state
// files, then waits (without holding the lock) until the host is reachable.
func (sb *Sandbox) startNode(ctx context.Context, name string) error {
	signer, err := sb.Signer()
	if err != nil {
		return err
	}
	host, err := func() (Host, error) {
		sb.mu.Lock()
		defer sb.mu.Unlock()
		var h *Host
		for i := range sb.Hosts {
			if sb.Hosts[i].Name == name {
				h = &sb.Hosts[i]
			}
		}
		if h == nil {
			return Host{}, fmt.Errorf("sandbox %s has no host %q", sb.Name, name)
		}
		id, err := sb.identity(h)
		if err != nil {
			return Host{}, err
		}
		userPub := authorizedKey(signer.PublicKey(), "slipway-sandbox-"+sb.Name)
		if _, err := sb.ensure(ctx, sb.nodeSpec(*h, identityFiles(id.key, id.pub, id.machineID, userPub))); err != nil {
			return Host{}, err
		}
		return *h, sb.writeFiles(ctx)
	}()
	if err != nil {
		return err
	}
	return sb.waitBooted(ctx, host, signer)
}

func (sb *Sandbox) waitHost(ctx context.Context, h Host) error {
	signer, err := sb.Signer()
	if err != nil {
		return err
	}
	return sb.waitBooted(ctx, h, signer)
}

// node returns a host that runs sshd (not the load balancer).
func (sb *Sandbox) node(name string) (Host, error) {
	h, ok := sb.Host(name)
	if !ok || h.Role == LoadBalancer {
		return Host{}, fmt.Errorf("sandbox %s has no host %q", sb.Name, name)
	}
	return h, nil
}

// Uptime formats how long ago a container started, for status.
func uptime(started string) string {
	t, err := time.Parse(time.RFC3339Nano, started)
	if err != nil {
		return "?"
	}
	return strconv.Itoa(int(time.Since(t).Seconds())) + "s"
}
