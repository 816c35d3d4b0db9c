package sandboxapi

import (
	"fmt"
	"path/filepath"
	"strings"
)

// nodeSpec is a bare host: systemd as PID 1 with the flags that make containerd and the kubelet
// work inside Docker on this kind of machine (see shared/e2e-notes.md).
func (sb *Sandbox) nodeSpec(h Host, identity map[string]file) spec {
	run := []string{"--network", sb.Network, "--ip", h.IP,
		// containerd's overlay snapshotter cannot sit on the container's own overlay root.
		"--mount", "type=volume,src=" + volumeName(h) + ",dst=/var/lib/containerd",
		"-e", "SANDBOX_DNS=" + sb.Assets.IP,
	}
	run = append(run, MachineFlags(sb.Privileged)...)
	return spec{name: h.Container, host: h.Name, run: run, image: sb.Image, files: identity, volume: volumeName(h)}
}

func volumeName(h Host) string { return h.Container + "-containerd" }

// identityFiles are a host's own SSH host key, machine-id and the sandbox's authorized key.
func identityFiles(hostKey []byte, hostPub, machineID, userPub string) map[string]file {
	return map[string]file{
		"etc/ssh/ssh_host_ed25519_key":     {data: hostKey, mode: 0o600},
		"etc/ssh/ssh_host_ed25519_key.pub": {data: []byte(hostPub + "\n"), mode: 0o644},
		"etc/machine-id":                   {data: []byte(machineID + "\n"), mode: 0o444},
		"root/.ssh/":                       {mode: 0o700},
		"root/.ssh/authorized_keys":        {data: []byte(userPub + "\n"), mode: 0o600},
	}
}

// lbSpec is haproxy in TCP mode in front of every control plane's apiserver. Health checks use
// /readyz, and sessions to a server marked down are cut so that clients reconnect elsewhere.
func (sb *Sandbox) lbSpec(h Host, cps []Host) spec {
	var b strings.Builder
	b.WriteString(`global
  log stdout format raw local0
  maxconn 4096

defaults
  mode tcp
  log global
  option tcplog
  timeout connect 5s
  timeout client 1h
  timeout server 1h

frontend kube-apiserver
  bind :6443
  default_backend control-planes

backend control-planes
  option httpchk GET /readyz
  http-check expect status 200
  default-server check check-ssl verify none inter 2s fall 2 rise 2 on-marked-down shutdown-sessions
`)
	for _, cp := range cps {
		fmt.Fprintf(&b, "  server %s %s:6443\n", cp.Name, cp.IP)
	}
	return spec{
		name: h.Container, host: h.Name, image: sb.Image,
		run:   []string{"--network", sb.Network, "--ip", h.IP, "--stop-signal", "SIGTERM", "--entrypoint", "haproxy"},
		cmd:   []string{"-db", "-f", "/etc/haproxy/haproxy.cfg"},
		files: map[string]file{"etc/haproxy/haproxy.cfg": {data: []byte(b.String()), mode: 0o644}},
	}
}

// assetsSpec runs assetd with the artifact cache mounted read-only at its host path, so that the
// paths in its arguments mean the same inside and outside.
func (sb *Sandbox) assetsSpec(cache, bin string, layouts []string, routes map[string]string) spec {
	cmd := []string{"-registry", ":5000", "-files", ":8080"}
	for _, l := range layouts {
		cmd = append(cmd, "-layout", l)
	}
	for _, prefix := range sortedKeys(routes) {
		cmd = append(cmd, "-route", prefix+"="+routes[prefix])
	}
	return spec{
		name: containerName(sb.Name, "assets"), host: "assets", image: sb.Image, cmd: cmd,
		run: []string{"--network", sb.Network, "--ip", sb.Assets.IP, "--stop-signal", "SIGTERM",
			"-v", cache + ":" + cache + ":ro", "-v", filepath.Dir(bin) + ":/opt/sandbox:ro",
			"--entrypoint", "/opt/sandbox/" + filepath.Base(bin)},
	}
}
