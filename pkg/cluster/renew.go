package cluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/kubeadm"
)

// RenewedHost is one control plane's certificate renewal, as RenewCertificates reports it.
type RenewedHost struct {
	Host string `json:"host"`
	// Renewed is how many of kubeadm's certificates (CAs excepted) now expire later.
	Renewed int `json:"renewed"`
	// Before and After are the earliest expiry of a certificate that is not a CA.
	Before  time.Time `json:"earliestExpiryBefore"`
	After   time.Time `json:"earliestExpiryAfter"`
	Seconds float64   `json:"seconds"`
}

// staticComponent is a control-plane static pod restarted after a renewal, and the local
// endpoint that says it is back. etcd is not among them: it reads its certificates again for
// every new connection.
type staticComponent struct {
	name, url string
}

var renewRestarts = []staticComponent{
	// First the API server, which serves the cluster; while it restarts the others keep their
	// leader election through the other control planes.
	{"kube-apiserver", fmt.Sprintf("https://127.0.0.1:%d/readyz", kubeadm.APIServerBindPort)},
	{"kube-controller-manager", "https://127.0.0.1:10257/healthz"},
	{"kube-scheduler", "https://127.0.0.1:10259/healthz"},
}

// criFunctions is how the renewal scripts reach containerd: crictl, which kubeadm requires on
// every node, with the socket named so that no /etc/crictl.yaml is needed.
const criFunctions = `cri() { crictl --runtime-endpoint unix:///run/containerd/containerd.sock --timeout 1m "$@"; }
`

// stopScript stops the running container of a static pod with SIGTERM (the kubelet starts a new
// one at once) and prints the stopped container's ID. It is killed after 30 s, the grace period
// the kubelet gives kubeadm's static pods: a kube-apiserver stops listening at once, then may
// wait that long for requests that never end.
func stopScript(component string) string {
	return fmt.Sprintf(`set -eu
%[1]sold=$(cri ps --name '^%[2]s$' --state running -q | head -n1)
[ -n "$old" ] || { echo "no running %[2]s container" >&2; exit 1; }
cri stop --timeout 30 "$old" >/dev/null
echo "$old"
`, criFunctions, component)
}

// backScript prints the static pod's running container and what its health endpoint answers.
func backScript(c staticComponent) string {
	return fmt.Sprintf(`set -u
%[1]srunning=$(cri ps --name '^%[2]s$' --state running -q 2>/dev/null | head -n1)
echo "container ${running:-none}"
code=$(curl -sk -o /dev/null -w '%%{http_code}' --max-time 5 %[3]s 2>/dev/null) || code=000
echo "health $code"
`, criFunctions, c.name, c.url)
}

// RenewCertificates renews kubeadm's certificates (all but the CAs) on every control plane,
// one at a time, with kubeadm certs renew all, and restarts the static pods that read them only
// at start: the API server, then the controller manager and the scheduler, each waited for
// before the next. While one control plane's API server restarts the others serve; a
// cluster with one control plane is without its API for that moment.
//
// Before it starts, every control plane must be reachable, and every API server ready unless
// its own certificates have expired (then renewing is the repair). Afterwards every
// certificate that is not a CA must expire later than before; one that does not is an error.
// progress, if not nil, hears each stage with the host's elapsed time.
func RenewCertificates(ctx context.Context, t *Target, progress func(host, stage string, elapsed time.Duration)) ([]RenewedHost, error) {
	cps := controlPlanes(t.Nodes)
	now := time.Now()
	before := map[*inventory.Node]HostStatus{}
	var problems []string
	for _, n := range cps {
		hs := hostStatus(ctx, t, n)
		before[n] = hs
		switch {
		case hs.Error != "":
			problems = append(problems, fmt.Sprintf("%s: %s", n.Name, hs.Error))
		case len(hs.Certificates) == 0:
			problems = append(problems, fmt.Sprintf("%s: no kubeadm certificates found: is it a control plane of this cluster?", n.Name))
		case hs.API != "ok" && !anyExpired(hs.Certificates, now):
			problems = append(problems, fmt.Sprintf("%s: its API server is not ready (%s), and not for expired certificates: restarting the other API servers now could leave none; repair it first (slipway status, slipway apply)", n.Name, hs.API))
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("not renewing the certificates:\n  - %s", strings.Join(problems, "\n  - "))
	}
	var out []RenewedHost
	for _, n := range cps {
		r, err := renewHost(ctx, t, n, before[n].Certificates, progress)
		if err != nil {
			return out, fmt.Errorf("renewing the certificates of %s: %w", n.Name, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func anyExpired(certs []Certificate, now time.Time) bool {
	for _, c := range certs {
		if !c.NotAfter.After(now) {
			return true
		}
	}
	return false
}

// renewHost renews one control plane's certificates and restarts its static pods.
func renewHost(ctx context.Context, t *Target, n *inventory.Node, before []Certificate, progress func(string, string, time.Duration)) (RenewedHost, error) {
	start := time.Now()
	stage := func(s string) {
		if progress != nil {
			progress(n.Name, s, time.Since(start))
		}
	}
	h := t.SSH.Host(n.Target)
	if err := h.Command(ctx, "kubeadm", "certs", "renew", "all").Run(); err != nil {
		return RenewedHost{}, err
	}
	stage("kubeadm certs renew all done")
	for _, c := range renewRestarts {
		old, err := h.Script(ctx, "stop-"+c.name, stopScript(c.name)).Output()
		if err != nil {
			return RenewedHost{}, fmt.Errorf("stopping %s: %w", c.name, err)
		}
		oldID := strings.TrimSpace(string(old))
		what := fmt.Sprintf("%s on %s to run again in a new container and answer %s", c.name, n.Name, c.url)
		err = kube.Wait(ctx, what, 3*time.Minute, func(ctx context.Context) (bool, string, error) {
			out, err := h.Script(ctx, "check-"+c.name, backScript(c)).Output()
			if err != nil {
				return false, err.Error(), nil
			}
			var id, code string
			for _, line := range strings.Split(string(out), "\n") {
				if v, ok := strings.CutPrefix(line, "container "); ok {
					id = v
				} else if v, ok := strings.CutPrefix(line, "health "); ok {
					code = v
				}
			}
			return id != "none" && id != "" && id != oldID && code == "200", fmt.Sprintf("container %s, health HTTP %s", id, code), nil
		})
		if err != nil {
			return RenewedHost{}, err
		}
		stage(c.name + " restarted and healthy")
	}
	after := hostStatus(ctx, t, n)
	if after.Error != "" {
		return RenewedHost{}, fmt.Errorf("reading the certificates after the renewal: %s", after.Error)
	}
	r, err := compareRenewed(before, after.Certificates)
	if err != nil {
		return RenewedHost{}, err
	}
	r.Host, r.Seconds = n.Name, time.Since(start).Seconds()
	return r, nil
}

// compareRenewed checks that every certificate that is not a CA expires later than before and
// that no CA changed, and sums the renewal up.
func compareRenewed(before, after []Certificate) (RenewedHost, error) {
	byFile := map[string]Certificate{}
	for _, c := range after {
		byFile[c.File] = c
	}
	var r RenewedHost
	var stale []string
	for _, b := range before {
		a, ok := byFile[b.File]
		switch {
		case !ok:
			stale = append(stale, b.File+" is gone")
		case b.CA && !a.NotAfter.Equal(b.NotAfter):
			stale = append(stale, fmt.Sprintf("the CA %s changed (expiry %s, was %s)", b.File, a.NotAfter.Format(time.DateOnly), b.NotAfter.Format(time.DateOnly)))
		case b.CA:
		case !a.NotAfter.After(b.NotAfter):
			stale = append(stale, fmt.Sprintf("%s still expires on %s", b.File, a.NotAfter.Format(time.RFC3339)))
		default:
			r.Renewed++
			if r.Before.IsZero() || b.NotAfter.Before(r.Before) {
				r.Before = b.NotAfter
			}
			if r.After.IsZero() || a.NotAfter.Before(r.After) {
				r.After = a.NotAfter
			}
		}
	}
	if len(stale) > 0 {
		return r, fmt.Errorf("after kubeadm certs renew all: %s", strings.Join(stale, "; "))
	}
	return r, nil
}
