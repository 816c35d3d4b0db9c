package sandboxapi

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// Status writes one line per sandbox container (host, role, address, state) and the asset URLs.
func (sb *Sandbox) Status(ctx context.Context, w io.Writer) error {
	fmt.Fprintf(w, "sandbox %s  network %s (%s)  state %s\n", sb.Name, sb.Network, sb.Subnet, sb.Dir)
	roles := map[string]Host{"assets": {Name: "assets", Role: "assets", IP: sb.Assets.IP, Container: containerName(sb.Name, "assets")}}
	for _, h := range sb.Hosts {
		roles[h.Name] = h
	}
	for _, name := range append([]string{"assets"}, hostNames(sb.Hosts)...) {
		h := roles[name]
		state, err := docker(ctx, "inspect", "--format", "{{.State.Status}} {{.State.StartedAt}}", h.Container)
		if err != nil {
			state = "missing"
		} else if f := strings.Fields(state); len(f) == 2 && f[0] == "running" {
			state = "running, up " + uptime(f[1])
		} else if len(f) > 0 {
			state = f[0]
		}
		fmt.Fprintf(w, "  %-16s %-14s %-15s %s\n", h.Name, h.Role, h.IP, state)
	}
	fmt.Fprintf(w, "registry %s (mirror of registry.k8s.io and ghcr.io)\nfiles    %s (/release/, /core:/stable:/<minor>/deb/, /cri-tools/, /containerd/)\nendpoint %s\n",
		sb.Assets.Registry, sb.Assets.Files, sb.Endpoint)
	if sb.Pool != nil {
		fmt.Fprintf(w, "pool     %d OpenStack servers on the Neutron network %s (slipway.yaml's workers; apply needs the cloud's OS_* variables)\n",
			sb.Pool.Replicas, sb.Pool.Network)
	}
	return nil
}

func hostNames(hs []Host) []string {
	names := make([]string, len(hs))
	for i, h := range hs {
		names[i] = h.Name
	}
	return names
}
