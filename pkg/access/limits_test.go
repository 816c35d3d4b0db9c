package access

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/encryption"
	"github.com/slipway-dev/slipway/pkg/ssh/sshtest"
)

// TestDownloadsAreBounded: what access reads from a control plane into memory is read with a
// limit, and a file past it is an error naming the file and the host (before the limits, a
// control plane's 2 MiB admin.conf or endless key file was read whole).
func TestDownloadsAreBounded(t *testing.T) {
	ctx := context.Background()
	huge := sshtest.File{Data: bytes.Repeat([]byte("x"), 2<<20)}

	fleet := &sshtest.Fleet{}
	fleet.Get("10.0.0.1").SetFile(AdminConf, huge)
	fleet.Get("10.0.0.2").SetFile(AdminConf, sshtest.File{Data: write(t, adminConfig(t))})
	data, h, err := New(nodes(), fleet, endpoint).AdminKubeconfig(ctx)
	if err != nil || h.Name() != "10.0.0.2" {
		t.Errorf("a control plane with a 2 MiB admin.conf before one with a good one: %v, %d bytes; want the second's", err, len(data))
	}
	fleet.Get("10.0.0.2").SetFile(AdminConf, huge)
	if _, _, err := New(nodes(), fleet, endpoint).AdminKubeconfig(ctx); err == nil ||
		!strings.Contains(err.Error(), AdminConf+" on 10.0.0.1 is larger than 1 MiB") || !strings.Contains(err.Error(), AdminConf+" on 10.0.0.2 is larger than 1 MiB") {
		t.Errorf("2 MiB admin.conf files: %v", err)
	}

	fleet = &sshtest.Fleet{}
	for _, cp := range []string{"10.0.0.1", "10.0.0.2"} {
		for _, f := range []string{"ca.crt", "healthcheck-client.crt"} {
			fleet.Get(cp).SetFile("/etc/kubernetes/pki/etcd/"+f, sshtest.File{Data: []byte("pem")})
		}
		fleet.Get(cp).SetFile("/etc/kubernetes/pki/etcd/healthcheck-client.key", huge)
	}
	if _, err := New(nodes(), fleet, endpoint).Etcd(ctx); err == nil || !strings.Contains(err.Error(), "/etc/kubernetes/pki/etcd/healthcheck-client.key on 10.0.0.1 is larger than 64 KiB") {
		t.Errorf("a 2 MiB etcd client key: %v", err)
	}

	cp := sshtest.NewHost("cp-1").On("^script encryption-state$", sshtest.Response{Stdout: "file\nconfigured\n"})
	cp.SetFile(encryption.File, huge)
	if _, err := ReadEncryption(ctx, cp); err == nil || err.Error() != encryption.File+" on cp-1 is larger than 64 KiB, the most slipway reads from it" {
		t.Errorf("a 2 MiB encryption configuration: %v", err)
	}
}
