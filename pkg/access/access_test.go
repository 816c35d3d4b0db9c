package access

import (
	"context"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/ssh/sshtest"
)

const kubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://10.0.0.10:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`

func nodes() []*inventory.Node {
	return inventory.Nodes(&v1beta1.Cluster{
		ControlPlane:  v1beta1.ControlPlane{Hosts: []v1beta1.Host{{PublicAddress: "10.0.0.1", IsLeader: true}, {PublicAddress: "10.0.0.2"}}},
		StaticWorkers: v1beta1.StaticWorkers{Hosts: []v1beta1.Host{{PublicAddress: "10.0.0.3"}}},
	})
}

func TestKubeFromTheFirstControlPlaneWithAKubeconfig(t *testing.T) {
	fleet := &sshtest.Fleet{}
	fleet.Get("10.0.0.2").SetFile(AdminConf, sshtest.File{Data: []byte(kubeconfig)})
	fleet.Get("10.0.0.3").SetFile(AdminConf, sshtest.File{Data: []byte("a worker's file is never read")})
	a := New(nodes(), fleet)
	ctx := context.Background()

	data, h, err := a.AdminKubeconfig(ctx)
	if err != nil || string(data) != kubeconfig || h.Name() != "10.0.0.2" {
		t.Fatalf("got %q from %v, %v; want the second control plane's", data, h, err)
	}
	c1, err := a.Kube(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c1.Config.Host != "https://10.0.0.10:6443" || c1.Config.Dial == nil {
		t.Errorf("client for %s, tunnelled %t", c1.Config.Host, c1.Config.Dial != nil)
	}
	if c2, _ := a.Kube(ctx); c2 != c1 {
		t.Error("the client was built again")
	}
	a.Forget()
	if c3, _ := a.Kube(ctx); c3 == c1 {
		t.Error("Forget kept the client")
	}
	if got := fleet.Get("10.0.0.3").Commands(); len(got) != 0 {
		t.Errorf("a worker was asked: %q", got)
	}
}

func TestNoControlPlaneReady(t *testing.T) {
	fleet := &sshtest.Fleet{}
	a := New(nodes(), fleet)
	_, err := a.Kube(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no control-plane host has /etc/kubernetes/admin.conf yet") ||
		!strings.Contains(err.Error(), "downloading /etc/kubernetes/admin.conf from 10.0.0.1") || !strings.Contains(err.Error(), "from 10.0.0.2") {
		t.Fatalf("got %v", err)
	}
	_, err = a.Etcd(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no control-plane host has the etcd client certificates") {
		t.Fatalf("got %v", err)
	}
}
