package cluster

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/scripts"
)

// checkCgroups stops apply, before anything changes, when a host runs cgroup v1 and the
// manifest has not opted in with kubelet.allowCgroupV1: kubelets from v1.35 on refuse to start
// there. With the opt-in it warns on every run, naming the hosts.
func checkCgroups(c *v1beta1.Cluster, facts map[string]scripts.Facts, log io.Writer) error {
	var v1 []string
	for name, f := range facts {
		if f.CgroupVersion == 1 {
			v1 = append(v1, name)
		}
	}
	if len(v1) == 0 {
		return nil
	}
	sort.Strings(v1)
	hosts := strings.Join(v1, ", ")
	if !c.Kubelet.AllowCgroupV1 {
		return fmt.Errorf("%s run cgroup v1, on which the kubelet of Kubernetes %s refuses to start: move the hosts to cgroup v2 (systemd.unified_cgroup_hierarchy=1 on the kernel command line), or set kubelet.allowCgroupV1: true in the manifest to run on cgroup v1 anyway; nothing was changed",
			hosts, c.Versions.Kubernetes)
	}
	fmt.Fprintf(log, "WARNING: %s run cgroup v1, which Kubernetes has deprecated and will stop supporting; kubelet.allowCgroupV1 lets the kubelet run there (failCgroupV1: false). Move the hosts to cgroup v2.\n", hosts)
	return nil
}
