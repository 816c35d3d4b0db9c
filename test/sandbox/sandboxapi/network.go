package sandboxapi

import (
	"context"
	"fmt"
	"net/netip"
)

// ensureNetwork creates the sandbox's bridge network, or checks that the existing one has the
// expected subnet. The network is internal: hosts reach each other, the assets container and the
// machine running the sandbox, but nothing beyond it.
func (sb *Sandbox) ensureNetwork(ctx context.Context) error {
	out, err := docker(ctx, "network", "ls", "-q", "--filter", "name=^"+sb.Network+"$")
	if err != nil {
		return err
	}
	subnet, err := parseSubnet(sb.Subnet)
	if err != nil {
		return err
	}
	if out != "" {
		got, err := docker(ctx, "network", "inspect", "--format", `{{range .IPAM.Config}}{{.Subnet}}{{end}} {{index .Labels "`+Label+`"}}`, sb.Network)
		if err != nil {
			return err
		}
		if want := subnet.String() + " " + sb.Name; got != want {
			return fmt.Errorf("network %s exists with subnet and label %q, want %q: run down first", sb.Network, got, want)
		}
		return nil
	}
	_, err = docker(ctx, "network", "create", "--driver", "bridge", "--internal",
		"--subnet", subnet.String(), "--gateway", addr(subnet, 1),
		"--label", Label+"="+sb.Name, sb.Network)
	return err
}

// Gateway is the machine's own address on the sandbox network.
func (sb *Sandbox) Gateway() string {
	p, err := netip.ParsePrefix(sb.Subnet)
	if err != nil {
		return ""
	}
	return addr(p, 1)
}

// removeExcept removes the sandbox's containers (and their volumes) whose names are not in keep.
func (sb *Sandbox) removeExcept(ctx context.Context, keep map[string]bool) error {
	out, err := docker(ctx, "ps", "-a", "--filter", "label="+Label+"="+sb.Name, "--format", "{{.Names}}")
	if err != nil {
		return err
	}
	for _, name := range lines(out) {
		if keep[name] {
			continue
		}
		if _, err := docker(ctx, "rm", "-f", "-v", name); err != nil {
			return err
		}
		if err := removeVolume(ctx, name+"-containerd"); err != nil {
			return err
		}
	}
	return nil
}

// removeVolume removes a sandbox volume if it exists.
func removeVolume(ctx context.Context, name string) error {
	out, err := docker(ctx, "volume", "ls", "-q", "--filter", "name=^"+name+"$", "--filter", "label="+Label)
	if err != nil || out == "" {
		return err
	}
	_, err = docker(ctx, "volume", "rm", "-f", name)
	return err
}
