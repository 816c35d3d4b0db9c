// Package inventory lists the hosts of a cluster manifest with their roles and the SSH targets
// that reach them, and says what each host's Node should carry (labels, annotations, taints).
// It is the one place where manifest host fields become connection settings.
package inventory

import (
	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/ssh"
)

// Node is one host of the cluster.
type Node struct {
	// Name is the Node name: the manifest hostname, or the host's own hostname once probed.
	// Until then a host without a manifest hostname goes by its address.
	Name string
	// Provisional means Name is the address and the host's own hostname replaces it on probing.
	Provisional bool
	Role        plan.Role
	// Index is the host's position in its manifest list, for messages.
	Index  int
	Host   v1beta1.Host
	Target ssh.Target
}

// Address is the address other hosts reach this one on.
func (n *Node) Address() string { return n.Host.PrivateAddress }

// Nodes returns control-plane hosts first (leader first), then static workers.
func Nodes(c *v1beta1.Cluster) []*Node {
	var out []*Node
	for i, h := range c.ControlPlane.Hosts {
		if h.IsLeader {
			out = append(out, node(h, plan.ControlPlane, i))
		}
	}
	for i, h := range c.ControlPlane.Hosts {
		if !h.IsLeader {
			out = append(out, node(h, plan.ControlPlane, i))
		}
	}
	for i, h := range c.StaticWorkers.Hosts {
		out = append(out, node(h, plan.Worker, i))
	}
	return out
}

func node(h v1beta1.Host, role plan.Role, i int) *Node {
	n := &Node{Name: h.Hostname, Role: role, Index: i, Host: h, Target: Target(h)}
	if n.Name == "" {
		n.Name, n.Provisional = h.PublicAddress, true
	}
	return n
}

// Target maps a manifest host to an SSH target.
func Target(h v1beta1.Host) ssh.Target {
	name := h.Hostname
	if name == "" {
		name = h.PublicAddress
	}
	t := ssh.Target{
		Name:           name,
		Address:        h.PublicAddress,
		Port:           h.SSHPort,
		User:           h.SSHUsername,
		PrivateKeyFile: h.SSHPrivateKeyFile,
		AgentSocket:    agentSocket(h.SSHAgentSocket),
		HostPublicKey:  h.SSHHostPublicKey,
	}
	// The manifest lists bastions from the host outwards; SSH dials the outermost first.
	var chain []ssh.Target
	for b := h.Bastion; b != nil; b = b.Bastion {
		chain = append([]ssh.Target{{
			Name:           b.Address,
			Address:        b.Address,
			Port:           b.Port,
			User:           b.User,
			PrivateKeyFile: b.PrivateKeyFile,
			AgentSocket:    t.AgentSocket,
			HostPublicKey:  b.HostPublicKey,
		}}, chain...)
	}
	t.Bastions = chain
	return t
}

// agentSocket resolves a validated sshAgentSocket; validation has refused what does not
// resolve. The default, $SSH_AUTH_SOCK, is left to the SSH layer, which reads it itself and
// ignores a stale agent when the host has a key file.
func agentSocket(spec string) string {
	if spec == v1beta1.DefaultSSHAgentSocket {
		return ""
	}
	s, err := v1beta1.ResolveAgentSocket(spec)
	if err != nil {
		return ""
	}
	return s
}

// Leader returns the leader node.
func Leader(nodes []*Node) *Node {
	for _, n := range nodes {
		if n.Role == plan.ControlPlane && n.Host.IsLeader {
			return n
		}
	}
	return nil
}
