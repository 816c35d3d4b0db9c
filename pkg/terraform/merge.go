package terraform

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/strict"
)

// Merge folds Terraform output into a manifest that has been decoded but not defaulted.
// manifestTree is the manifest as written (from strict.DecodeTree); it tells which worker fields
// the manifest set. The rules:
//   - Terraform supplies the control-plane hosts, the static workers and the API endpoint. A
//     manifest that also lists hosts where the output lists some is an error, rather than one
//     silently overriding the other; an identical endpoint is fine. Which address of a host is
//     dialled and which is the cluster's is HostGroup.hosts's to say; a control plane with no
//     hosts in either place is an error that names the output's field.
//   - cluster_name and cloud_provider fill the manifest's name and cloudProvider when unset and
//     must agree with them when set.
//   - Worker pools are matched by name. Every field the manifest sets wins over Terraform's;
//     maps merge key by key and lists are replaced whole. Pools only in Terraform are appended
//     in name order.
func Merge(c *v1beta1.Cluster, manifestTree any, out *Output) field.ErrorList {
	if out == nil {
		return nil
	}
	var errs field.ErrorList
	names := out.outputs()
	if cp := out.ControlPlane; cp != nil {
		p := field.NewPath(names.hosts, "value", "control_plane")
		errs = append(errs, mergeIdentity(c, cp, p)...)
		hosts, e := cp.hosts(p)
		errs = append(errs, e...)
		switch {
		case cp.hasAddresses() && len(c.ControlPlane.Hosts) > 0:
			errs = append(errs, field.Forbidden(field.NewPath("controlPlane", "hosts"),
				"control-plane hosts are also in the Terraform output ("+p.String()+"); list them in one place only"))
		case cp.hasAddresses():
			c.ControlPlane.Hosts = hosts
		case len(c.ControlPlane.Hosts) == 0:
			errs = append(errs, field.Required(p.Child(publicAddress), "the control plane has no hosts: list their addresses "+
				"in public_address or, for hosts reached only through the bastion, in private_address "+
				"(or list the hosts in the manifest's controlPlane.hosts)"))
		}
	}
	if len(out.StaticWorkers) > 0 {
		if len(c.StaticWorkers.Hosts) > 0 && out.staticWorkerHosts() {
			errs = append(errs, field.Forbidden(field.NewPath("staticWorkers", "hosts"),
				"static workers are also in the Terraform output ("+names.staticWorkers+"); list them in one place only"))
		} else {
			for _, name := range slices.Sorted(maps.Keys(out.StaticWorkers)) {
				g := out.StaticWorkers[name]
				hosts, e := g.hosts(field.NewPath(names.staticWorkers, "value").Key(name))
				errs = append(errs, e...)
				c.StaticWorkers.Hosts = append(c.StaticWorkers.Hosts, hosts...)
			}
		}
	}
	if out.API != nil {
		errs = append(errs, mergeAPI(c, out.API, names.api)...)
	}
	errs = append(errs, mergeWorkers(c, manifestTree, out)...)
	return errs
}

func mergeIdentity(c *v1beta1.Cluster, g *HostGroup, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if g.ClusterName != "" {
		if c.Name == "" {
			c.Name = g.ClusterName
		} else if c.Name != g.ClusterName {
			errs = append(errs, field.Invalid(field.NewPath("name"), c.Name,
				fmt.Sprintf("differs from %s %q", p.Child("cluster_name"), g.ClusterName)))
		}
	}
	cloud := c.CloudProvider
	switch g.CloudProvider {
	case "":
	case "openstack":
		if cloud.None != nil {
			errs = append(errs, field.Invalid(field.NewPath("cloudProvider", "none"), "{}", fmt.Sprintf("differs from %s %q", p.Child("cloud_provider"), g.CloudProvider)))
		} else if cloud.OpenStack == nil {
			c.CloudProvider.OpenStack = &v1beta1.OpenStackCloud{}
		}
	case "none":
		if cloud.OpenStack != nil {
			errs = append(errs, field.Invalid(field.NewPath("cloudProvider", "openstack"), "{}", fmt.Sprintf("differs from %s %q", p.Child("cloud_provider"), g.CloudProvider)))
		} else if cloud.None == nil {
			c.CloudProvider.None = &v1beta1.NoneCloud{}
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("cloud_provider"), g.CloudProvider, []string{"openstack", "none"}))
	}
	return errs
}

func mergeAPI(c *v1beta1.Cluster, api *API, output string) field.ErrorList {
	p := field.NewPath(output, "value", "endpoint")
	host, port := api.Endpoint, 0
	if h, ps, err := net.SplitHostPort(api.Endpoint); err == nil {
		n, err := strconv.Atoi(ps)
		if err != nil {
			return field.ErrorList{field.Invalid(p, api.Endpoint, "must be a host or host:port")}
		}
		host, port = h, n
	}
	var errs field.ErrorList
	if host != "" {
		if c.APIEndpoint.Host != "" && c.APIEndpoint.Host != host {
			errs = append(errs, field.Invalid(field.NewPath("apiEndpoint", "host"), c.APIEndpoint.Host, fmt.Sprintf("differs from %s %q; set it in one place only", p, host)))
		}
		c.APIEndpoint.Host = host
	}
	if port != 0 {
		if c.APIEndpoint.Port != 0 && c.APIEndpoint.Port != port {
			errs = append(errs, field.Invalid(field.NewPath("apiEndpoint", "port"), c.APIEndpoint.Port, fmt.Sprintf("differs from the port in %s %q", p, api.Endpoint)))
		}
		c.APIEndpoint.Port = port
	}
	seen := map[string]bool{}
	for _, n := range c.APIEndpoint.AlternativeNames {
		seen[n] = true
	}
	for _, n := range api.AlternativeNames {
		if !seen[n] {
			c.APIEndpoint.AlternativeNames = append(c.APIEndpoint.AlternativeNames, n)
			seen[n] = true
		}
	}
	return errs
}

func mergeWorkers(c *v1beta1.Cluster, manifestTree any, out *Output) field.ErrorList {
	if len(out.Workers) == 0 {
		return nil
	}
	manifestPools := map[string]map[string]any{}
	if top, ok := manifestTree.(map[string]any); ok {
		list, _ := top["workers"].([]any)
		for _, item := range list {
			if m, ok := item.(map[string]any); ok {
				if name, ok := m["name"].(string); ok {
					manifestPools[name] = m
				}
			}
		}
	}
	var errs field.ErrorList
	index := map[string]int{}
	for i, w := range c.Workers {
		index[w.Name] = i
	}
	for _, name := range slices.Sorted(maps.Keys(out.Workers)) {
		tree := deepCopy(out.workerTrees[name])
		if tree == nil {
			tree = map[string]any{}
		}
		tree["name"] = name
		if m, ok := manifestPools[name]; ok {
			tree = deepMerge(tree, m)
		}
		var pool v1beta1.WorkerPool
		if err := strict.FromTree(tree, &pool); err != nil {
			errs = append(errs, field.Invalid(field.NewPath(out.outputs().workers, "value").Key(name), "", err.Error()))
			continue
		}
		if i, ok := index[name]; ok {
			c.Workers[i] = pool
		} else {
			c.Workers = append(c.Workers, pool)
		}
	}
	return errs
}

// deepMerge returns base with over's fields laid on top: maps merge recursively, anything else
// (lists included) is replaced.
func deepMerge(base, over map[string]any) map[string]any {
	for k, v := range over {
		if om, ok := v.(map[string]any); ok {
			if bm, ok := base[k].(map[string]any); ok {
				base[k] = deepMerge(bm, om)
				continue
			}
		}
		base[k] = v
	}
	return base
}

func deepCopy(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			out[k] = deepCopy(sub)
		} else {
			out[k] = v
		}
	}
	return out
}
