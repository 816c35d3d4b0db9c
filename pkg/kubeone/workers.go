package kubeone

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// The MachineDeployment annotations the cluster-autoscaler reads a pool's bounds from, which
// slipway writes from a pool's autoscaler field.
const (
	autoscalerMin = "cluster.k8s.io/cluster-api-autoscaler-node-group-min-size"
	autoscalerMax = "cluster.k8s.io/cluster-api-autoscaler-node-group-max-size"
	osmProfile    = "k8c.io/operating-system-profile"
)

// Pool converts one KubeOne worker definition (a dynamicWorkers entry, or a kubeone_workers
// value with its name set) into a slipway worker pool. p is the path of the definition, which
// warnings and errors name. Only OpenStack machines convert: their cloudProviderSpec fields that
// slipway's pools have are mapped, the others warned about.
func Pool(w *DynamicWorker, p *field.Path) (v1beta1.WorkerPool, []Warning, field.ErrorList) {
	c := &converter{}
	ps := &w.ProviderSpec
	sp := p.Child("providerSpec")
	pool := v1beta1.WorkerPool{
		Name:     w.Name,
		Replicas: w.Replicas,
		ProviderSpec: v1beta1.WorkerProviderSpec{
			OperatingSystem:          ps.OperatingSystem,
			SSHPublicKeys:            slices.Clone(ps.SSHPublicKeys),
			Labels:                   maps.Clone(ps.Labels),
			MachineObjectAnnotations: maps.Clone(ps.MachineObjectAnnotations),
		},
	}
	for i, t := range ps.Taints {
		pool.ProviderSpec.Taints = append(pool.ProviderSpec.Taints, v1beta1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect})
		if t.TimeAdded != "" {
			c.warn(sp.Child("taints").Index(i).Child("timeAdded"), "dropped: the kubelet sets it for NoExecute taints")
		}
	}
	// Node annotations: nodeAnnotations, and machineAnnotations, KubeOne's older name for them.
	for _, m := range []map[string]string{ps.MachineAnnotations, ps.NodeAnnotations} {
		for k, v := range m {
			if pool.ProviderSpec.Annotations == nil {
				pool.ProviderSpec.Annotations = map[string]string{}
			}
			pool.ProviderSpec.Annotations[k] = v
		}
	}
	c.poolAnnotations(ps.Annotations, sp.Child("annotations"), &pool)
	c.osSpec(ps.OperatingSystemSpec, sp.Child("operatingSystemSpec"), &pool.ProviderSpec.OperatingSystemSpec)
	if !slices.Contains(v1alpha1.OperatingSystems, ps.OperatingSystem) {
		c.errs = append(c.errs, field.NotSupported(sp.Child("operatingSystem"), ps.OperatingSystem, v1alpha1.OperatingSystems))
	}
	if ps.Network != nil {
		c.warn(sp.Child("network"), "not supported: slipway's machines take their address from the OpenStack subnet (DHCP)")
	}
	if ps.OverwriteCloudConfig != nil {
		c.warn(sp.Child("overwriteCloudConfig"), "not supported: machines get no cloud config of their own; the cloud-controller-manager has it")
	}
	pool.ProviderSpec.CloudProviderSpec = c.openstack(ps.CloudProviderSpec, sp.Child("cloudProviderSpec"))
	return pool, c.warnings, c.errs
}

// poolAnnotations maps the MachineDeployment's own annotations: the autoscaler's bounds become
// the pool's autoscaler field; slipway sets no other annotation on a MachineDeployment.
func (c *converter) poolAnnotations(a map[string]string, p *field.Path, pool *v1beta1.WorkerPool) {
	bounds := map[string]int32{}
	for _, k := range slices.Sorted(maps.Keys(a)) {
		v := a[k]
		switch k {
		case autoscalerMin, autoscalerMax:
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil {
				c.errs = append(c.errs, field.Invalid(p.Key(k), v, "must be a whole number"))
				continue
			}
			bounds[k] = int32(n)
		case osmProfile:
			c.warn(p.Key(k), "no longer needed: slipway's machine-controller writes the machines' user-data itself (there is no operating-system-manager)")
		default:
			c.warn(p.Key(k), "not supported: slipway sets no annotations of its own on MachineDeployments")
		}
	}
	lo, hasLo := bounds[autoscalerMin]
	hi, hasHi := bounds[autoscalerMax]
	switch {
	case hasLo && hasHi:
		pool.Autoscaler = &v1beta1.Autoscaler{Min: lo, Max: hi}
	case hasLo || hasHi:
		c.errs = append(c.errs, field.Required(p, fmt.Sprintf("both %s and %s, or neither", autoscalerMin, autoscalerMax)))
	}
}

func (c *converter) osSpec(spec map[string]any, p *field.Path, out *v1beta1.OperatingSystemSpec) {
	for _, k := range slices.Sorted(maps.Keys(spec)) {
		v := spec[k]
		switch k {
		case "distUpgradeOnBoot", "disableAutoUpdate":
			b, ok := v.(bool)
			if !ok {
				c.errs = append(c.errs, field.Invalid(p.Child(k), v, "must be true or false"))
				continue
			}
			if k == "distUpgradeOnBoot" {
				out.DistUpgradeOnBoot = b
			} else {
				out.DisableAutoUpdate = b
			}
		case "provisioningUtility":
			c.warn(p.Child(k), "no longer needed: slipway's machine-controller boots its operating systems (ubuntu, debian) with cloud-init")
		default:
			c.warn(p.Child(k), "not supported by slipway's machine-controller")
		}
	}
}

// openstack maps an OpenStack cloudProviderSpec of Kubermatic's machine-controller. The cloud
// and the credentials come from slipway's OS_* environment, never from a pool; the region, which
// picks endpoints of that cloud's catalog, is the pool's to choose.
func (c *converter) openstack(spec map[string]any, p *field.Path) v1beta1.OpenStackWorkerSpec {
	var o v1beta1.OpenStackWorkerSpec
	str := func(k string, dst *string) {
		switch v := spec[k].(type) {
		case nil:
		case string:
			*dst = v
		default:
			c.errs = append(c.errs, field.Invalid(p.Child(k), v, "must be a string: slipway's pools take no references to Secrets or ConfigMaps"))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(spec)) {
		v := spec[k]
		switch k {
		case "image":
			str(k, &o.Image)
		case "flavor":
			str(k, &o.Flavor)
		case "network":
			str(k, &o.Network)
		case "subnet":
			str(k, &o.Subnet)
		case "floatingIpPool":
			str(k, &o.FloatingIPPool)
		case "availabilityZone":
			str(k, &o.AvailabilityZone)
		case "region":
			str(k, &o.Region)
		case "serverGroup":
			str(k, &o.ServerGroupID)
		case "securityGroups":
			list, ok := v.([]any)
			for i, g := range list {
				s, isString := g.(string)
				if !isString {
					c.errs = append(c.errs, field.Invalid(p.Child(k).Index(i), g, "must be a string"))
				}
				o.SecurityGroups = append(o.SecurityGroups, s)
			}
			if !ok && v != nil {
				c.errs = append(c.errs, field.Invalid(p.Child(k), v, "must be a list of names or IDs"))
			}
		case "tags":
			m, ok := v.(map[string]any)
			if !ok && v != nil {
				c.errs = append(c.errs, field.Invalid(p.Child(k), v, "must be a map of strings"))
			}
			for tk, tv := range m {
				if o.Tags == nil {
					o.Tags = map[string]string{}
				}
				o.Tags[tk] = fmt.Sprint(tv)
			}
		case "rootDiskSizeGB":
			n, ok := v.(float64)
			if v != nil && (!ok || n != float64(int32(n))) {
				c.errs = append(c.errs, field.Invalid(p.Child(k), v, "must be a whole number"))
			} else if ok && n > 0 {
				size := int32(n)
				o.RootDiskSizeGB = &size
			}
		case "configDrive":
			b, ok := v.(bool)
			if !ok && v != nil {
				c.errs = append(c.errs, field.Invalid(p.Child(k), v, "must be true or false"))
			}
			o.ConfigDrive = b
		case "identityEndpoint", "username", "password", "domainName", "projectName", "projectID", "tenantName", "tenantID",
			"applicationCredentialID", "applicationCredentialSecret", "tokenId":
			c.warn(p.Child(k), "no longer needed: slipway's machine-controller takes the cloud and the credentials from the OS_* variables of slipway's environment, never from a pool")
		default:
			c.warn(p.Child(k), "not supported by slipway's machine-controller; left out")
		}
	}
	return o
}
