package sandboxapi

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// hostMinimums are kernel limits that every sandbox host shares with this machine, because all
// containers run as the same user of the same kernel. Each kubelet, systemd and cAdvisor takes
// inotify instances; with two sandboxes of clusters the default 128 (or even 1024) ran out and
// kubelets failed to start ("inotify_init: too many open files"), which made kubeadm join time
// out. kind recommends the same values.
var hostMinimums = map[string]int{
	"/proc/sys/fs/inotify/max_user_instances": 8192,
	"/proc/sys/fs/inotify/max_user_watches":   524288,
}

// raiseHostLimits raises (never lowers) those limits and says what it changed.
func raiseHostLimits(log io.Writer) error {
	for _, path := range sortedKeys(hostMinimums) {
		want := hostMinimums[path]
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
		have, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
		if have >= want {
			continue
		}
		if err := os.WriteFile(path, []byte(strconv.Itoa(want)), 0o644); err != nil {
			return fmt.Errorf("raising %s from %d to %d (sandbox hosts need it; run as root or set it yourself): %w", path, have, want, err)
		}
		fmt.Fprintf(log, "raised %s from %d to %d\n", path, have, want)
	}
	return nil
}
