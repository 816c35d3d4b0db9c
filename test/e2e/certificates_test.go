package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/slipway-dev/slipway/pkg/cluster"
)

// checkRenew renews every control plane's certificates while a client reads the API through
// the load balancer, and checks that not one of its requests failed, that every certificate but
// the CAs expires later, and that the API servers and etcd members serve the new ones.
//
// Before that, kubeadm gives cp-1 an API server certificate valid for ten days (as a cluster
// nobody renewed for a year would have), and apply must warn of it.
func (h *harness) checkRenew(t *testing.T, manifest string, controlPlanes []string) {
	before := h.certificates(t, manifest)
	short := fmt.Sprintf("apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v%s\ncertificateValidityPeriod: 240h0m0s\n", strings.TrimPrefix(previous, "v"))
	if _, err := h.onHost("cp-1", "cat > /tmp/short.yaml <<'EOF'\n"+short+"EOF\nkubeadm certs renew apiserver --config /tmp/short.yaml && rm /tmp/short.yaml"); err != nil {
		t.Fatal(err)
	}
	r := h.slipway(nil, "apply", "-m", manifest, "--dry-run")
	if want := "Warning: certificate /etc/kubernetes/pki/apiserver.crt (kube-apiserver) on cp-1 expires in"; r.code != 0 || !strings.Contains(r.out, want) {
		t.Errorf("apply --dry-run with a certificate that expires in ten days: exit code %d; want 0 and %q\n%s", r.code, want, r.out)
	}

	p := startAPIProber(h.kube("e2e"))
	r = h.slipway(nil, "certificates", "renew", "-m", manifest, "-o", "json")
	ok, failures := p.stop()
	var res []cluster.RenewedHost
	if err := json.Unmarshal([]byte(r.stdout), &res); r.code != 0 || err != nil {
		t.Fatalf("certificates renew: exit code %d, %v\n%s", r.code, err, r.out)
	}
	t.Logf("API prober: %d requests answered through the load balancer during the renewal, %d failed", ok, len(failures))
	if len(failures) > 0 || ok < 10 {
		t.Errorf("%d API requests failed (%d answered); want none:\n%s", len(failures), ok, strings.Join(failures, "\n"))
	}
	if len(res) != len(controlPlanes) {
		t.Errorf("%d control planes renewed; want %d", len(res), len(controlPlanes))
	}
	for _, host := range controlPlanes {
		if !strings.Contains(r.out, "["+host+"] kube-apiserver restarted and healthy") {
			t.Errorf("no progress line for %s's API server", host)
		}
	}

	after := h.certificates(t, manifest)
	for _, hc := range before {
		now := map[string]cluster.Certificate{}
		for _, hca := range after {
			if hca.Host == hc.Host {
				for _, c := range hca.Certificates {
					now[c.File] = c
				}
			}
		}
		for _, c := range hc.Certificates {
			a := now[c.File]
			if c.CA && !a.NotAfter.Equal(c.NotAfter) || !c.CA && !a.NotAfter.After(c.NotAfter) {
				t.Errorf("%s %s (CA %t): expiry %s before the renewal, %s after", hc.Host, c.File, c.CA, c.NotAfter, a.NotAfter)
			}
		}
		// The restarted API server and etcd, which reloads by itself, serve the new certificates.
		ip := h.host(hc.Host).IP
		if got, want := h.servedExpiry(t, hc.Host, ip+":6443", false), now["/etc/kubernetes/pki/apiserver.crt"].NotAfter; !got.Equal(want) {
			t.Errorf("%s's API server serves a certificate that expires %s; its apiserver.crt expires %s", hc.Host, got, want)
		}
		if got, want := h.servedExpiry(t, hc.Host, ip+":2379", true), now["/etc/kubernetes/pki/etcd/server.crt"].NotAfter; !got.Equal(want) {
			t.Errorf("%s's etcd serves a certificate that expires %s; its etcd/server.crt expires %s", hc.Host, got, want)
		}
	}
}

// certificates is what certificates check -o json says.
func (h *harness) certificates(t *testing.T, manifest string) []cluster.HostCertificates {
	r := h.slipway(nil, "certificates", "check", "-m", manifest, "-o", "json")
	var hcs []cluster.HostCertificates
	if err := json.Unmarshal([]byte(r.stdout), &hcs); r.code != 0 || err != nil {
		t.Fatalf("certificates check: exit code %d, %v\n%s", r.code, err, r.out)
	}
	return hcs
}

// servedExpiry returns when the certificate served at addr expires. etcd asks for a client
// certificate: with withClient, the host's etcd healthcheck client certificate is shown.
func (h *harness) servedExpiry(t *testing.T, host, addr string, withClient bool) time.Time {
	cfg := &tls.Config{InsecureSkipVerify: true} // the served certificate is what is looked at, not trusted
	if withClient {
		crt, err := h.onHost(host, "cat /etc/kubernetes/pki/etcd/healthcheck-client.crt")
		if err != nil {
			t.Fatal(err)
		}
		key, err := h.onHost(host, "cat /etc/kubernetes/pki/etcd/healthcheck-client.key")
		if err != nil {
			t.Fatal(err)
		}
		pair, err := tls.X509KeyPair([]byte(crt), []byte(key))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		t.Fatalf("TLS to %s: %v", addr, err)
	}
	defer conn.Close()
	var leaf *x509.Certificate
	if cs := conn.ConnectionState().PeerCertificates; len(cs) > 0 {
		leaf = cs[0]
	} else {
		t.Fatalf("%s served no certificate", addr)
	}
	return leaf.NotAfter
}

// apiProber reads a namespace through the API endpoint every 100 ms, as a client of the
// cluster would, and records every request that fails.
type apiProber struct {
	cancel   context.CancelFunc
	done     sync.WaitGroup
	mu       sync.Mutex
	ok       int
	failures []string
}

func startAPIProber(c kubernetes.Interface) *apiProber {
	ctx, cancel := context.WithCancel(context.Background())
	p := &apiProber{cancel: cancel}
	p.done.Add(1)
	go func() {
		defer p.done.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			rctx, rcancel := context.WithTimeout(ctx, 15*time.Second)
			start := time.Now()
			_, err := c.CoreV1().Namespaces().Get(rctx, "kube-system", metav1.GetOptions{})
			rcancel()
			p.mu.Lock()
			switch {
			case err == nil:
				p.ok++
			case ctx.Err() == nil:
				p.failures = append(p.failures, fmt.Sprintf("%s (after %s): %v", start.Format("15:04:05.000"), time.Since(start).Round(time.Millisecond), err))
			}
			p.mu.Unlock()
		}
	}()
	return p
}

func (p *apiProber) stop() (ok int, failures []string) {
	p.cancel()
	p.done.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ok, p.failures
}

// checkPKIBackup checks the backup apply saved of the CAs and keys: mode 0600, and the keys
// that cp-1 holds.
func (h *harness) checkPKIBackup(t *testing.T) {
	path := filepath.Join(h.dir, "e2e-pki.tar.gz")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("apply saved no backup of the CAs and keys: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %o; it holds the CA keys, want 0600", path, fi.Mode().Perm())
	}
	out, err := exec.Command("tar", "-xzOf", path, "pki/ca.key").Output()
	if err != nil {
		t.Fatalf("tar -xzOf %s pki/ca.key: %v", path, err)
	}
	onHost, err := h.onHost("cp-1", "cat /etc/kubernetes/pki/ca.key")
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != onHost {
		t.Error("the backup's ca.key is not cp-1's")
	}
	list, err := exec.Command("tar", "-tzf", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(list)); len(got) != 8 {
		t.Errorf("the backup holds %v; want the three CAs with their keys and the service-account key pair", got)
	}
}
