package hosts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
	"github.com/slipway-dev/slipway/test/sandbox/sandboxapi"
)

// Labels of a load balancer's container: its Octavia ID and the hash of its first configuration.
const (
	labelLB       = Label + ".loadbalancer"
	labelLBConfig = Label + ".config"
)

const haproxyConfig = "/etc/haproxy/haproxy.cfg"

// syncLoadBalancers runs one haproxy container (the amphora) per load balancer that is up, at its
// VIP address on its network, and removes the others. A changed configuration is reloaded in
// place (haproxy's master-worker reload), so that established connections survive.
func (b *Backend) syncLoadBalancers(ctx context.Context, lbs []openstacktest.LoadBalancerInfo) error {
	out, err := sandboxapi.Docker(ctx, "ps", "-a", "--filter", "label="+Label+"="+b.name, "--filter", "label="+labelLB,
		"--format", `{{.Names}} {{.Label "`+labelLB+`"}} {{.Label "`+labelLBConfig+`"}} {{.State}}`)
	if err != nil {
		return err
	}
	type existing struct{ name, state string }
	have := map[string]existing{}
	for _, line := range sandboxapi.Lines(out) {
		if f := strings.Fields(line); len(f) == 4 {
			have[f[1]] = existing{f[0], f[3]}
		}
	}
	b.lbMu.Lock()
	defer b.lbMu.Unlock()
	want := map[string]bool{}
	for _, lb := range lbs {
		if !lb.AdminUp || lb.VIP == "" {
			continue
		}
		want[lb.ID] = true
		cfg := haproxyConfigOf(lb)
		sum := sha256.Sum256([]byte(cfg))
		hash := hex.EncodeToString(sum[:8])
		cur, ok := have[lb.ID]
		switch {
		case ok && b.lbApplied[lb.ID] == hash && cur.state == "running":
		case ok && b.lbApplied[lb.ID] != "" && cur.state == "running":
			if err := b.reloadLB(ctx, cur.name, cfg, hash); err != nil {
				return fmt.Errorf("load balancer %s: %w", lb.ID, err)
			}
			b.lbApplied[lb.ID] = hash
		default:
			if ok {
				if _, err := sandboxapi.Docker(ctx, "rm", "-f", cur.name); err != nil {
					return err
				}
			}
			if err := b.startLB(ctx, lb, cfg, hash); err != nil {
				return fmt.Errorf("load balancer %s: %w", lb.ID, err)
			}
			b.lbApplied[lb.ID] = hash
		}
	}
	for id, cur := range have {
		if !want[id] {
			if _, err := sandboxapi.Docker(ctx, "rm", "-f", cur.name); err != nil {
				return err
			}
			delete(b.lbApplied, id)
			b.logf("load balancer %s: amphora removed", id)
		}
	}
	return nil
}

func (b *Backend) startLB(ctx context.Context, lb openstacktest.LoadBalancerInfo, cfg, hash string) error {
	if err := b.ensureNetwork(ctx, lb.Network); err != nil {
		return err
	}
	name := "slipway-os-" + b.name + "-lb-" + lb.ID[:min(8, len(lb.ID))]
	if _, err := sandboxapi.Docker(ctx, "create", "--name", name, "--hostname", "amphora-"+lb.ID[:min(8, len(lb.ID))],
		"--label", Label+"="+b.name, "--label", labelLB+"="+lb.ID, "--label", labelLBConfig+"="+hash,
		"--network", b.networkName(lb.Network), "--ip", lb.VIP,
		"--stop-signal", "SIGTERM", "--entrypoint", "haproxy", b.image, "-W", "-db", "-f", haproxyConfig); err != nil {
		return err
	}
	if err := b.writeLBConfig(ctx, name, cfg); err != nil {
		return err
	}
	if _, err := sandboxapi.Docker(ctx, "start", name); err != nil {
		return err
	}
	// A signal that reaches haproxy before it handles signals is lost (it is PID 1), so a
	// reload must wait until the first configuration is loaded.
	if err := waitLoaded(ctx, name, 1); err != nil {
		return err
	}
	b.logf("load balancer %s (%s) serves at %s", lb.ID, lb.Name, lb.VIP)
	return nil
}

// waitLoaded waits until haproxy's master has loaded a configuration n times since the
// container was created.
func waitLoaded(ctx context.Context, container string, n int) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		out, err := haproxyLog(ctx, container)
		if err == nil && strings.Count(out, "Loading success") >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("haproxy in %s did not load its configuration (load %d): %s", container, n, lastLines(out, 5))
		case <-tick.C:
		}
	}
}

// haproxyLog is what haproxy wrote; its notices go to stderr.
func haproxyLog(ctx context.Context, container string) (string, error) {
	out, err := exec.CommandContext(ctx, "docker", "logs", container).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("docker logs %s: %w: %s", container, err, lastLines(string(out), 5))
	}
	return string(out), nil
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

// reloadLB writes the new configuration and has haproxy's master reload its workers. The
// container's label keeps the hash of the configuration it was created with; the backend
// remembers what it applied since.
func (b *Backend) reloadLB(ctx context.Context, name, cfg, hash string) error {
	out, err := haproxyLog(ctx, name)
	if err != nil {
		return err
	}
	loads := strings.Count(out, "Loading success")
	if err := b.writeLBConfig(ctx, name, cfg); err != nil {
		return err
	}
	if _, err := sandboxapi.Docker(ctx, "kill", "--signal", "USR2", name); err != nil {
		return err
	}
	if err := waitLoaded(ctx, name, loads+1); err != nil {
		return err
	}
	b.logf("load balancer container %s reloaded (config %s)", name, hash)
	return nil
}

func (b *Backend) writeLBConfig(ctx context.Context, name, cfg string) error {
	archive, err := tarOf("", map[string][]byte{strings.TrimPrefix(haproxyConfig, "/"): []byte(cfg)}, 0o644)
	if err != nil {
		return err
	}
	_, err = sandboxapi.DockerIn(ctx, strings.NewReader(string(archive)), "cp", "-", name+":/")
	return err
}

// haproxyConfigOf renders an amphora's haproxy configuration: one frontend per listener that is
// up, forwarding to its members that are up, checked by the pool's health monitor.
func haproxyConfigOf(lb openstacktest.LoadBalancerInfo) string {
	var c strings.Builder
	fmt.Fprintf(&c, `# amphora of load balancer %s (%s)
global
  log stdout format raw local0
  maxconn 4096

defaults
  log global
  option tcplog
  timeout connect 5s
  timeout client 1h
  timeout server 1h
`, lb.ID, lb.Name)
	for _, l := range lb.Listeners {
		if !l.AdminUp || l.Protocol == "UDP" {
			continue
		}
		mode := "tcp"
		if l.Protocol == "HTTP" {
			mode = "http"
		}
		fmt.Fprintf(&c, "\nfrontend listener-%s\n  mode %s\n  bind :%d\n", l.ID, mode, l.Port)
		if len(l.AllowedCIDRs) > 0 {
			fmt.Fprintf(&c, "  tcp-request connection reject unless { src %s }\n", strings.Join(l.AllowedCIDRs, " "))
		}
		fmt.Fprintf(&c, "  default_backend pool-%s\n\nbackend pool-%s\n  mode %s\n  balance %s\n", l.ID, l.ID, mode, balance(l.Method))
		check := ""
		if m := l.Monitor; m != nil {
			switch m.Type {
			case "HTTP", "HTTPS":
				method := m.HTTPMethod
				if method == "" {
					method = "GET"
				}
				path := m.URLPath
				if path == "" {
					path = "/"
				}
				fmt.Fprintf(&c, "  option httpchk %s %s\n", method, path)
				if codes := expectedCodes(m.ExpectedCodes); codes != "" {
					fmt.Fprintf(&c, "  http-check expect %s\n", codes)
				}
			}
			if m.Timeout > 0 {
				fmt.Fprintf(&c, "  timeout check %ds\n", m.Timeout)
			}
			check = fmt.Sprintf(" check inter %ds fall %d rise %d", max(1, m.Delay), max(1, m.MaxRetries), max(1, m.MaxRetries))
			if m.Type == "HTTPS" || m.Type == "TLS-HELLO" {
				check += " check-ssl verify none"
			}
			// A member that goes down loses its sessions, as Octavia's amphora does, so clients
			// reconnect to a healthy one.
			check += " on-marked-down shutdown-sessions"
		}
		for _, m := range l.Members {
			if !m.AdminUp {
				continue
			}
			// Weight 0 drains a member, in Octavia as in haproxy.
			fmt.Fprintf(&c, "  server member-%s %s:%d weight %d%s\n", m.ID, m.Address, m.Port, m.Weight, check)
		}
	}
	return c.String()
}

func balance(method string) string {
	switch method {
	case "LEAST_CONNECTIONS":
		return "leastconn"
	case "SOURCE_IP":
		return "source"
	}
	return "roundrobin"
}

// expectedCodes turns Octavia's "200", "200,202" or "200-204" into haproxy's expectation.
func expectedCodes(s string) string {
	switch {
	case s == "":
		return "status 200"
	case strings.Contains(s, ","):
		return "rstatus ^(" + strings.ReplaceAll(s, ",", "|") + ")$"
	case strings.Contains(s, "-"):
		lo, hi, _ := strings.Cut(s, "-")
		if len(lo) == 3 && len(hi) == 3 && lo[:2] == hi[:2] {
			return "rstatus ^" + lo[:2] + "[" + lo[2:] + "-" + hi[2:] + "]$"
		}
		return "rstatus ^[0-9]{3}$"
	}
	return "status " + s
}
