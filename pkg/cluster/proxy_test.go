package cluster

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/ssh/sshtest"
)

func TestAPIProxyDestinationsAndHosts(t *testing.T) {
	c := &v1beta1.Cluster{APIVersion: v1beta1.APIVersion, Kind: v1beta1.Kind, Name: "unit", Versions: v1beta1.Versions{Kubernetes: "v1.36.3"},
		APIEndpoint: v1beta1.APIEndpoint{Host: "api.example.test", Port: 443, AlternativeNames: []string{"10.0.0.100"}}}
	c.ControlPlane.Hosts = []v1beta1.Host{
		{PublicAddress: "192.0.2.1", PrivateAddress: "10.0.0.1", SSHPrivateKeyFile: "/k"},
		{PublicAddress: "192.0.2.2", PrivateAddress: "10.0.0.2", SSHPrivateKeyFile: "/k"},
	}
	c.StaticWorkers.Hosts = []v1beta1.Host{{PublicAddress: "192.0.2.3", PrivateAddress: "10.0.0.3", SSHPrivateKeyFile: "/k"}}
	v1beta1.SetDefaults(c, "test")
	if errs, _ := v1beta1.Validate(c); len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	fleet := &sshtest.Fleet{}
	target := NewTarget(c, fleet)
	var dialled []string
	for _, n := range target.Nodes {
		h := fleet.Get(n.Target.String())
		h.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			dialled = append(dialled, h.Name()+" "+addr)
			if n.Host.PrivateAddress == "10.0.0.1" {
				return nil, errors.New("connection refused")
			}
			a, b := net.Pipe()
			b.Close()
			return a, nil
		}
	}
	p, err := APIProxy(target)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"api.example.test:443", "10.0.0.100:443", "10.0.0.1:6443", "192.0.2.1:6443", "10.0.0.2:6443", "192.0.2.2:6443"}
	if got := p.Allowed(); !slices.Equal(got, want) {
		t.Errorf("allowed destinations %v, want %v (the endpoint first, no worker)", got, want)
	}
	via, err := p.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(dialled) != 2 || !strings.HasSuffix(dialled[0], " api.example.test:443") || !strings.Contains(dialled[0], "192.0.2.1") || !strings.Contains(dialled[1], "192.0.2.2") || !strings.Contains(via, "192.0.2.2") {
		t.Errorf("Check dialled %v and went through %q; want the leader first, then the second control plane", dialled, via)
	}
}

func TestSetProxyURL(t *testing.T) {
	kc := []byte(`apiVersion: v1
kind: Config
clusters:
- name: unit
  cluster: {server: "https://10.0.0.1:6443", certificate-authority-data: Y2E=}
users:
- name: admin
  user: {token: secret}
contexts:
- name: admin@unit
  context: {cluster: unit, user: admin}
current-context: admin@unit
`)
	same, err := SetProxyURL(kc, "")
	if err != nil || string(same) != string(kc) {
		t.Errorf("no proxy changed the kubeconfig: %v\n%s", err, same)
	}
	out, err := SetProxyURL(kc, "http://127.0.0.1:8080")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Clusters["unit"].ProxyURL; got != "http://127.0.0.1:8080" {
		t.Errorf("proxy-url %q", got)
	}
	if cfg.Clusters["unit"].Server != "https://10.0.0.1:6443" || cfg.AuthInfos["admin"].Token != "secret" || cfg.CurrentContext != "admin@unit" {
		t.Errorf("the rest of the kubeconfig changed:\n%s", out)
	}
	for _, bad := range []string{"ftp://h:1", "127.0.0.1:8080", "http://", "http://[::1"} {
		if _, err := SetProxyURL(kc, bad); err == nil {
			t.Errorf("SetProxyURL(%q) succeeded", bad)
		}
	}
	if _, err := SetProxyURL([]byte("not: [a kubeconfig"), "http://h:1"); err == nil {
		t.Error("a broken kubeconfig was accepted")
	}
}
