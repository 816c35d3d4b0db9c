package workers

import (
	"fmt"
	"sort"
	"strings"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

// KubeletUpgrade is an existing MachineDeployment whose kubelet version apply changes.
type KubeletUpgrade struct {
	Name, From, To string
}

// PinKubelet decides the kubelet version of each pool. A pool that does not exist yet gets the
// manifest's version. An existing pool keeps the version it runs (existing maps a
// MachineDeployment name in Namespace to its spec.template.spec.versions.kubelet) unless
// upgrade is set, as with KubeOne's --upgrade-machine-deployments: raising versions.kubernetes
// upgrades the control plane and static workers, and rolling every cloud worker is a separate,
// explicit decision. With upgrade set, existing MachineDeployments that the manifest does not
// declare are returned too, for apply to bump their version alone.
//
// The returned list names every existing MachineDeployment whose version changes, sorted.
func PinKubelet(mds []*v1alpha1.MachineDeployment, existing map[string]string, version string, upgrade bool) (changed []KubeletUpgrade, undeclared []string) {
	version = strings.TrimPrefix(version, "v")
	declared := map[string]bool{}
	for _, md := range mds {
		declared[md.Name] = true
		have, ok := existing[md.Name]
		if !ok {
			continue
		}
		v := &md.Spec.Template.Spec.Versions
		if !upgrade {
			v.Kubelet = have
			continue
		}
		if strings.TrimPrefix(have, "v") != version {
			changed = append(changed, KubeletUpgrade{md.Name, have, version})
		}
	}
	if upgrade {
		for name, have := range existing {
			if !declared[name] && strings.TrimPrefix(have, "v") != version {
				changed = append(changed, KubeletUpgrade{name, have, version})
				undeclared = append(undeclared, name)
			}
		}
	}
	sort.Slice(changed, func(i, j int) bool { return changed[i].Name < changed[j].Name })
	sort.Strings(undeclared)
	return changed, undeclared
}

// KubeletBumps renders, for each named MachineDeployment in Namespace, a partial object that
// sets only its kubelet version: applied under a field manager of its own, it leaves every
// other field to whoever owns it.
func KubeletBumps(names []string, version string) []byte {
	var out []byte
	for _, name := range names {
		out = fmt.Appendf(out, "---\napiVersion: %s\nkind: MachineDeployment\nmetadata: {name: %q, namespace: %q}\nspec: {template: {spec: {versions: {kubelet: %q}}}}\n",
			v1alpha1.GroupVersion, name, Namespace, strings.TrimPrefix(version, "v"))
	}
	return out
}
