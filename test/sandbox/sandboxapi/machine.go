package sandboxapi

import (
	"context"
	"io"
)

// MachineFlags are the `docker create` flags that make a container of the node image boot like
// a machine on this kind of host: systemd as PID 1 in its own cgroup namespace, the devices and
// capabilities containerd and the kubelet need, tmpfs where a machine has them, and IP forwarding
// (see shared/e2e-notes.md). The caller adds the network, name, identity and the containerd volume.
// privileged is what CanSetResources reports.
func MachineFlags(privileged bool) []string {
	flags := []string{
		"--cgroupns=private",
		"--security-opt", "seccomp=unconfined", "--security-opt", "apparmor=unconfined",
		"--security-opt", "systempaths=unconfined",
		"--device", "/dev/kmsg", "--device-cgroup-rule", "a *:* rwm",
		// Docker mounts tmpfs noexec by default; real hosts run programs from /tmp.
		"--tmpfs", "/run", "--tmpfs", "/run/lock", "--tmpfs", "/tmp:rw,exec,nosuid,nodev,mode=1777",
		"--sysctl", "net.ipv4.ip_forward=1",
	}
	if privileged {
		return append(flags, "--privileged")
	}
	return append(flags, "--cap-add=ALL", "--cap-drop=SYS_RESOURCE")
}

// CanSetResources reports whether machines can run --privileged here (see canSetResources).
func CanSetResources() bool { return canSetResources() }

// Docker runs the docker CLI and returns its trimmed stdout; errors carry the command and the
// tail of its stderr.
func Docker(ctx context.Context, args ...string) (string, error) { return docker(ctx, args...) }

// DockerIn is Docker with stdin, e.g. for `docker cp -`.
func DockerIn(ctx context.Context, stdin io.Reader, args ...string) (string, error) {
	return dockerIn(ctx, stdin, args...)
}

// Lines splits command output into its non-empty lines.
func Lines(out string) []string { return lines(out) }
