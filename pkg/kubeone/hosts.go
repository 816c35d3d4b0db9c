package kubeone

import (
	"encoding/base64"
	"errors"
	"maps"
	"strings"

	"golang.org/x/crypto/ssh"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

func (c *converter) hosts(k *cluster, out *v1beta1.Cluster) {
	cp := field.NewPath("controlPlane")
	for i := range k.ControlPlane.Hosts {
		out.ControlPlane.Hosts = append(out.ControlPlane.Hosts, c.host(&k.ControlPlane.Hosts[i], cp.Child("hosts").Index(i), true))
	}
	if len(k.ControlPlane.NodeSets) > 0 {
		c.warn(cp.Child("nodeSets"), "not supported: slipway does not create control-plane machines; list the control planes as hosts (or in the Terraform output)")
	}
	sw := field.NewPath("staticWorkers", "hosts")
	for i := range k.StaticWorkers.Hosts {
		out.StaticWorkers.Hosts = append(out.StaticWorkers.Hosts, c.host(&k.StaticWorkers.Hosts[i], sw.Index(i), false))
	}
}

// host maps a HostConfig. KubeOne dials the public address, or the private one when there is
// none (hosts behind the bastion); slipway's publicAddress is the address it dials.
func (c *converter) host(h *host, p *field.Path, controlPlane bool) v1beta1.Host {
	out := v1beta1.Host{
		PublicAddress:     h.PublicAddress,
		PrivateAddress:    h.PrivateAddress,
		Hostname:          h.Hostname,
		SSHUsername:       h.SSHUsername,
		SSHPort:           h.SSHPort,
		SSHPrivateKeyFile: h.SSHPrivateKeyFile,
		SSHAgentSocket:    h.SSHAgentSocket,
		SSHHostPublicKey:  c.hostKey(h.SSHHostPublicKey, p.Child("sshHostPublicKey")),
		Labels:            maps.Clone(h.Labels),
		Annotations:       maps.Clone(h.Annotations),
		IsLeader:          h.IsLeader && controlPlane,
		Kubelet:           c.kubelet(&h.Kubelet, p.Child("kubelet")),
	}
	if out.PublicAddress == "" {
		out.PublicAddress = h.PrivateAddress
	}
	if h.IsLeader && !controlPlane {
		c.warn(p.Child("isLeader"), "dropped: only control-plane hosts can lead (KubeOne ignored it too)")
	}
	if h.Taints != nil {
		out.Taints = []v1beta1.Taint{}
		for i, t := range *h.Taints {
			out.Taints = append(out.Taints, v1beta1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect})
			if t.TimeAdded != "" {
				c.warn(p.Child("taints").Index(i).Child("timeAdded"), "dropped: the kubelet sets it for NoExecute taints")
			}
		}
	}
	if len(h.IPv6Addresses) > 0 {
		c.warn(p.Child("ipv6Addresses"), "not supported: slipway runs single-stack IPv4 clusters; the host keeps its IPv4 addresses")
	}
	if h.SSHCertFile != "" && h.SSHCertFile != h.SSHPrivateKeyFile+"-cert.pub" {
		c.warn(p.Child("sshCertFile"), "not carried over: slipway uses the certificate at <sshPrivateKeyFile>-cert.pub; put %s there", h.SSHCertFile)
	}
	if h.OperatingSystem != "" {
		c.warn(p.Child("operatingSystem"), "no longer needed: slipway reads the operating system from the host")
	}
	if h.Bastion != "" {
		b := &v1beta1.Bastion{
			Address:        h.Bastion,
			Port:           h.BastionPort,
			User:           h.BastionUser,
			PrivateKeyFile: h.BastionPrivateKeyFile,
			HostPublicKey:  c.hostKey(h.BastionHostPublicKey, p.Child("bastionHostPublicKey")),
		}
		out.Bastion = b // KubeOne's bastion user and port default as slipway's do: sshUsername, 22
	} else if h.BastionPort != 0 || h.BastionUser != "" || len(h.BastionHostPublicKey) > 0 || h.BastionPrivateKeyFile != "" {
		c.warn(p.Child("bastion"), "empty, so the other bastion settings of this host are unused (as in KubeOne)")
	}
	return out
}

func (c *converter) hostKey(s string, p *field.Path) string {
	key, err := HostKey(s)
	if err != nil {
		c.errs = append(c.errs, field.Invalid(p, s, err.Error()))
	}
	return key
}

// HostKey turns a KubeOne host key (bytes, so base64 in YAML and in Terraform's JSON) into the
// authorized_keys line slipway pins. A key already written as a line ("ssh-ed25519 AAAA...") is
// taken as it is.
func HostKey(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	if !strings.Contains(s, " ") {
		if b, err := base64.StdEncoding.DecodeString(s); err == nil {
			s = strings.TrimSpace(string(b))
		}
	}
	if _, _, _, _, err := ssh.ParseAuthorizedKey([]byte(s)); err != nil {
		return "", errors.New("must be an SSH public key (\"ssh-ed25519 AAAA...\"), or one encoded in base64 as KubeOne reads it")
	}
	return s, nil
}
