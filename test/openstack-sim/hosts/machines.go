package hosts

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
	"github.com/slipway-dev/slipway/test/sandbox/sandboxapi"
)

// seedDir is where cloud-init's ConfigDrive datasource looks for a config drive's content when
// there is no block device labelled config-2 (a container has none).
const seedDir = "var/lib/cloud/seed/config_drive/"

// Spawn creates and starts the server's host: attached to its networks with the ports' addresses,
// its config drive in place, a volume for containerd's snapshots. A host that fails to start is
// removed again, so that a server in ERROR leaves nothing behind.
func (b *Backend) Spawn(ctx context.Context, m openstacktest.Machine) (err error) {
	if len(m.Ports) == 0 {
		return fmt.Errorf("server %s has no port with an address: the simulator boots servers with at least one network", m.Server.ID)
	}
	for _, p := range m.Ports {
		if err := b.ensureNetwork(ctx, p.Network); err != nil {
			return err
		}
	}
	if err := b.Destroy(ctx, m.Server.ID); err != nil { // a leftover of an interrupted spawn
		return err
	}
	defer func() {
		if err != nil {
			if derr := b.Destroy(context.WithoutCancel(ctx), m.Server.ID); derr != nil {
				b.logf("server %s: removing the failed host: %v", m.Server.ID, derr)
			}
		}
	}()
	name := b.containerName(m)
	labels := []string{"--label", Label + "=" + b.name, "--label", labelServer + "=" + m.Server.ID}
	volume := name + "-containerd"
	if _, err := sandboxapi.Docker(ctx, append(append([]string{"volume", "create"}, labels...), volume)...); err != nil {
		return err
	}
	first := m.Ports[0]
	args := []string{"create", "--name", name, "--hostname", m.Hostname,
		// The terminal is the server's serial console: systemd and cloud-init write to it, and
		// `docker logs` keeps it across reboots, as the hypervisor's console log does.
		"--tty",
		"--network", b.networkName(first.Network), "--ip", first.IP,
		"--mount", "type=volume,src=" + volume + ",dst=/var/lib/containerd"}
	// The entrypoint gives each interface its port's MAC address: the Docker CLI can only set one
	// per network from API 1.44 on, and this machine's daemon may be older.
	var macs []string
	for _, p := range m.Ports {
		if p.MAC != "" {
			macs = append(macs, p.IP+"="+p.MAC)
		}
	}
	if len(macs) > 0 {
		args = append(args, "-e", "SANDBOX_MACS="+strings.Join(macs, " "))
	}
	args = append(append(append(args, labels...), sandboxapi.MachineFlags(b.privileged)...), b.image)
	if _, err := sandboxapi.Docker(ctx, args...); err != nil {
		return err
	}
	for _, p := range m.Ports[1:] {
		if _, err := sandboxapi.Docker(ctx, "network", "connect", "--ip", p.IP, b.networkName(p.Network), name); err != nil {
			return err
		}
	}
	drive, err := tarOf(seedDir, m.ConfigDrive, 0o600)
	if err != nil {
		return err
	}
	if _, err := sandboxapi.DockerIn(ctx, bytes.NewReader(drive), "cp", "-", name+":/"); err != nil {
		return fmt.Errorf("writing the config drive of %s: %w", m.Server.ID, err)
	}
	if _, err := sandboxapi.Docker(ctx, "start", name); err != nil {
		return err
	}
	if err := b.hairpin(ctx, name); err != nil {
		return err
	}
	b.logf("server %s (%s) runs as %s at %s", m.Server.ID, m.Server.Name, name, first.IP)
	return nil
}

// Destroy removes the server's host and its volume; a server without a host is no error.
func (b *Backend) Destroy(ctx context.Context, serverID string) error {
	filter := "label=" + labelServer + "=" + serverID
	ids, err := b.list(ctx, []string{"ps", "-aq", "--filter", filter})
	if err != nil {
		return err
	}
	if len(ids) > 0 {
		if _, err := sandboxapi.Docker(ctx, append([]string{"rm", "-f", "-v"}, ids...)...); err != nil {
			return err
		}
		b.logf("server %s: host removed", serverID)
	}
	vols, err := b.list(ctx, []string{"volume", "ls", "-q", "--filter", filter})
	if err != nil || len(vols) == 0 {
		return err
	}
	_, err = sandboxapi.Docker(ctx, append([]string{"volume", "rm", "-f"}, vols...)...)
	return err
}

// Power stops (systemd shuts down cleanly), starts or reboots the server's host, disk kept.
func (b *Backend) Power(ctx context.Context, serverID string, a openstacktest.PowerAction) error {
	id, err := b.container(ctx, serverID)
	if err != nil {
		return err
	}
	var steps [][]string
	switch a {
	case openstacktest.PowerOff:
		steps = [][]string{{"stop", "--time", "30", id}}
	case openstacktest.PowerOn:
		steps = [][]string{{"start", id}}
	case openstacktest.SoftReboot:
		steps = [][]string{{"restart", "--time", "30", id}}
	case openstacktest.HardReboot:
		steps = [][]string{{"kill", id}, {"start", id}}
	default:
		return fmt.Errorf("unknown power action %q", a)
	}
	for _, s := range steps {
		if _, err := sandboxapi.Docker(ctx, s...); err != nil && !(a == openstacktest.HardReboot && s[0] == "kill" && strings.Contains(err.Error(), "is not running")) {
			return err
		}
	}
	if a == openstacktest.PowerOff {
		return nil
	}
	return b.hairpin(ctx, id)
}

// Console returns the tail of the host's terminal output, with a serial console's line ends.
func (b *Backend) Console(ctx context.Context, serverID string, lines int) (string, error) {
	id, err := b.container(ctx, serverID)
	if err != nil {
		return "", err
	}
	tail := "all"
	if lines > 0 {
		tail = strconv.Itoa(lines)
	}
	out, err := sandboxapi.Docker(ctx, "logs", "--tail", tail, id)
	return strings.ReplaceAll(out, "\r\n", "\n") + "\n", err
}

// container finds the server's host.
func (b *Backend) container(ctx context.Context, serverID string) (string, error) {
	ids, err := b.list(ctx, []string{"ps", "-aq", "--filter", "label=" + labelServer + "=" + serverID})
	if err != nil {
		return "", err
	}
	if len(ids) == 0 {
		return "", fmt.Errorf("server %s has no host", serverID)
	}
	return ids[0], nil
}

func (b *Backend) list(ctx context.Context, args []string) ([]string, error) {
	out, err := sandboxapi.Docker(ctx, append(args, "--filter", "label="+Label+"="+b.name)...)
	return sandboxapi.Lines(out), err
}

// containerName is readable and unique: the cloud, the hostname and the server ID's start.
func (b *Backend) containerName(m openstacktest.Machine) string {
	return "slipway-os-" + b.name + "-" + m.Hostname + "-" + m.Server.ID[:min(8, len(m.Server.ID))]
}

// tarOf archives files under prefix (both relative to /), with their directories, for docker cp.
func tarOf(prefix string, files map[string][]byte, mode int64) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		full := prefix + p
		var chain []string // the file's directories, deepest first
		for d := full[:strings.LastIndexByte(full, '/')]; d != "" && !dirs[d]; d = d[:max(0, strings.LastIndexByte(d, '/'))] {
			chain = append(chain, d)
		}
		for i := len(chain) - 1; i >= 0; i-- {
			dirs[chain[i]] = true
			if err := tw.WriteHeader(&tar.Header{Name: chain[i] + "/", Mode: 0o755, Typeflag: tar.TypeDir}); err != nil {
				return nil, err
			}
		}
		if err := tw.WriteHeader(&tar.Header{Name: full, Mode: mode, Size: int64(len(files[p])), Typeflag: tar.TypeReg}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(files[p]); err != nil {
			return nil, err
		}
	}
	err := tw.Close()
	return buf.Bytes(), err
}
