package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/slipway-dev/slipway/pkg/etcd"
	"github.com/slipway-dev/slipway/test/sandbox/sandboxapi"
)

// fakeHost is a host that does not exist, for the unreachable-host case.
func fakeHost(name, ip, key string) sandboxapi.Host {
	return sandboxapi.Host{Name: name, IP: ip, HostKey: key}
}

func (h *harness) hostsList(hs ...sandboxapi.Host) []sandboxapi.Host { return hs }

func (h *harness) writeRaw(file, content string) string {
	h.t.Helper()
	p := filepath.Join(h.dir, file)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		h.t.Fatal(err)
	}
	return p
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// slipwayEtcdMembers asks etcd for its member list, with the healthcheck client certificate of
// cp-1, straight from this machine (the sandbox network is reachable).
func (h *harness) slipwayEtcdMembers() (int, error) {
	var creds etcd.Credentials
	for path, dst := range map[string]*[]byte{
		"/etc/kubernetes/pki/etcd/ca.crt":                 &creds.CA,
		"/etc/kubernetes/pki/etcd/healthcheck-client.crt": &creds.Cert,
		"/etc/kubernetes/pki/etcd/healthcheck-client.key": &creds.Key,
	} {
		out, err := h.onHost("cp-1", "cat "+path)
		if err != nil {
			return 0, err
		}
		*dst = []byte(out)
	}
	ctx := context.Background()
	c, err := etcd.New(ctx, []string{"https://" + h.host("cp-1").IP + ":2379"}, creds, nil)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	ms, err := c.Members(ctx)
	if err != nil {
		return 0, err
	}
	healthy := 0
	for _, m := range ms {
		if m.Healthy {
			healthy++
		}
	}
	if healthy != len(ms) {
		h.t.Logf("etcd: %d of %d members healthy", healthy, len(ms))
	}
	return len(ms), nil
}
