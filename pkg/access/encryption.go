package access

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/slipway-dev/slipway/pkg/encryption"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/kubeadm"
	"github.com/slipway-dev/slipway/pkg/ssh"
)

// EncryptionOnHost is what a control plane holds of the encryption of Secrets at rest.
type EncryptionOnHost struct {
	// Data is the encryption configuration file, nil when the host has none. It holds the keys:
	// never print it.
	Data []byte
	// Configured means the host's kube-apiserver static pod reads the file.
	Configured bool
}

// encryptionScript says whether the file exists and whether the API server's static pod names
// it; the file itself travels by Download, which verbose output never shows.
var encryptionScript = fmt.Sprintf(`set -u
[ -f %[1]s ] && echo file
grep -q -e '--encryption-provider-config=%[2]s' /etc/kubernetes/manifests/kube-apiserver.yaml 2>/dev/null && echo configured
exit 0
`, ssh.Quote(encryption.File), encryption.File)

// ReadEncryption reads what the control plane h holds of the encryption of Secrets at rest.
func ReadEncryption(ctx context.Context, h ssh.Host) (EncryptionOnHost, error) {
	out, err := h.Script(ctx, "encryption-state", encryptionScript).Output()
	if err != nil {
		return EncryptionOnHost{}, err
	}
	var e EncryptionOnHost
	lines := strings.Fields(string(out))
	for _, l := range lines {
		e.Configured = e.Configured || l == "configured"
	}
	for _, l := range lines {
		if l != "file" {
			continue
		}
		data, err := ssh.ReadFile(ctx, h, encryption.File, encryption.MaxFileBytes)
		if err != nil {
			return EncryptionOnHost{}, err
		}
		e.Data = data
	}
	return e, nil
}

// HostKube returns an admin client of the API server of the control plane h itself (not the
// endpoint, which may lead to any): every connection goes through h's SSH connection to its
// local API server. The server's certificate is checked against the endpoint's name, which
// every API server's certificate carries.
func (a *Cluster) HostKube(ctx context.Context, h ssh.Host) (*kube.Client, error) {
	data, _, err := a.AdminKubeconfig(ctx)
	if err != nil {
		return nil, err
	}
	local := net.JoinHostPort("127.0.0.1", strconv.Itoa(kubeadm.APIServerBindPort))
	return kube.New(data, func(ctx context.Context, network, _ string) (net.Conn, error) {
		return h.DialContext(ctx, network, local)
	})
}
