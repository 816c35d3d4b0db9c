package apiproxy_test

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/apiproxy"
	"github.com/slipway-dev/slipway/pkg/cluster"
	"github.com/slipway-dev/slipway/test/envtest"
)

func TestMain(m *testing.M) { os.Exit(envtest.Main(m)) }

// TestKubectlThroughTheProxy runs the real kubectl against a real kube-apiserver with a
// kubeconfig that cluster.SetProxyURL pointed at the proxy: the requests go through the
// proxy's tunnels, and stop working when the proxy stops.
func TestKubectlThroughTheProxy(t *testing.T) {
	env := envtest.Get(t)
	api, err := url.Parse(env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	cp := &host{name: "cp-1"}
	p, err := apiproxy.New([]apiproxy.Dialer{cp}, []string{api.Host})
	if err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	p.Log, p.Verbose = &log, true
	proxyURL, stop := serve(t, p)

	dir := t.TempDir()
	direct := filepath.Join(dir, "direct.conf")
	if err := envtest.WriteKubeconfig(env.Config, direct); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(direct)
	if err != nil {
		t.Fatal(err)
	}
	data, err = cluster.SetProxyURL(data, proxyURL.String())
	if err != nil {
		t.Fatal(err)
	}
	proxied := filepath.Join(dir, "proxied.conf")
	if err := os.WriteFile(proxied, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "proxy-url: "+proxyURL.String()) {
		t.Fatalf("SetProxyURL wrote no proxy-url:\n%s", data)
	}

	kubectl := func() (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, env.Kubectl(), "--kubeconfig", proxied, "--request-timeout", "10s",
			"get", "namespace", "kube-system", "-o", "name").CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	out, err := kubectl()
	if err != nil || out != "namespace/kube-system" {
		t.Fatalf("kubectl through the proxy: %v\n%s\nproxy log:\n%s", err, out, log.String())
	}
	if cp.dials.Load() == 0 {
		t.Fatal("kubectl answered, but the proxy opened no tunnel")
	}
	if !strings.Contains(log.String(), "[cp-1] tunnel to "+api.Host) {
		t.Errorf("the proxy's log does not show the tunnel:\n%s", log.String())
	}
	if err := stop(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if out, err := kubectl(); err == nil {
		t.Fatalf("kubectl still answered with the proxy stopped: %s", out)
	}
}
