package selftest

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/slipway-dev/slipway/test/sandbox/sandboxapi"
)

const kubectl = "kubectl --kubeconfig /etc/kubernetes/admin.conf "

// network waits for both nodes' pod CIDRs (they appear shortly after join) and then gives each
// node its bridge configuration and a route to the other's pods.
func (t *test) network(ctx context.Context) error {
	type node struct{ cidr, ip string }
	nodes := map[string]node{}
	err := t.poll(ctx, 60*time.Second, "both nodes to get a pod CIDR", func() error {
		out, err := t.sb.Run(ctx, t.cp, kubectl+`get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.spec.podCIDR} {.status.addresses[?(@.type=="InternalIP")].address}{"\n"}{end}'`)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if f := strings.Fields(line); len(f) == 3 {
				nodes[f[0]] = node{f[1], f[2]}
			}
		}
		if len(nodes) < 2 {
			return fmt.Errorf("nodes with a pod CIDR: %q", out)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return t.both(ctx, func(h sandboxapi.Host) error {
		args := []string{nodes[h.Name].cidr}
		for name, n := range nodes {
			if name != h.Name {
				args = append(args, n.cidr, n.ip)
			}
		}
		_, err := t.sb.RunScript(ctx, h, cniScript, args...)
		return err
	})
}

func (t *test) ready(ctx context.Context) error {
	return t.poll(ctx, 120*time.Second, "both nodes to be Ready", func() error {
		out, err := t.sb.Run(ctx, t.cp, kubectl+"get nodes -o wide")
		if err != nil {
			return err
		}
		t.res.Nodes = strings.TrimSpace(out)
		if strings.Count(out, " Ready ") != 2 {
			return fmt.Errorf("nodes:\n%s", out)
		}
		return nil
	})
}

// coreDNS waits until CoreDNS, scheduled only once a node is Ready, answers its readiness probe:
// its image came through the mirror and its pods got addresses from the bridge.
func (t *test) coreDNS(ctx context.Context) error {
	_, err := t.sb.Run(ctx, t.cp, kubectl+"-n kube-system rollout status deployment/coredns --timeout=180s")
	return err
}

// poll retries check every second until it passes or the timeout ends.
func (t *test) poll(ctx context.Context, timeout time.Duration, what string, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waited %s for %s: %w", timeout, what, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
