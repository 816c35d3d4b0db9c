package sandboxapi

import "syscall"

// cgroup2Magic is the file system type of a cgroup v2 (unified) hierarchy: what
// `stat -fc %T /sys/fs/cgroup` prints as cgroup2fs.
const cgroup2Magic = 0x63677270

// CgroupV1 reports whether this machine, whose Docker runs the sandbox's hosts, uses cgroup v1 (or
// the hybrid layout), which the hosts' kubelets then see too. Kubelets from v1.35 on refuse cgroup
// v1 unless told otherwise, so manifests for the sandbox opt in (kubelet.allowCgroupV1) there.
func CgroupV1() bool {
	var fs syscall.Statfs_t
	if err := syscall.Statfs("/sys/fs/cgroup", &fs); err != nil {
		// No cgroup file system to read: not a v2 host that we can tell of; Docker would not run.
		return true
	}
	return fs.Type != cgroup2Magic
}
