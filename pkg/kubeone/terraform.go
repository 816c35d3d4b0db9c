package kubeone

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// Terraform is what the cluster's Terraform output (KubeOne's kubeone_* outputs) says, as far as
// KubeOne prefers it to the manifest's own values: KubeOne names the cluster after
// cluster_name, takes its cloud from cloud_provider when the manifest names none, its API
// endpoint from kubeone_api, and its control planes from kubeone_hosts in place of the
// manifest's, and adds kubeone_static_workers to the manifest's static workers. Convert gives
// the Terraform output the same say, so that the converted manifest loads with that output; the
// zero value is no Terraform output.
type Terraform struct {
	// ClusterName and CloudProvider are kubeone_hosts.value.control_plane's cluster_name and
	// cloud_provider.
	ClusterName, CloudProvider string
	// Endpoint is kubeone_api.value.endpoint, and AlternativeNames whether its
	// apiserver_alternative_names lists any.
	Endpoint         string
	AlternativeNames bool
	// ControlPlaneHosts and StaticWorkerHosts say whether the output lists control-plane hosts
	// and static workers.
	ControlPlaneHosts, StaticWorkerHosts bool
}

// terraform leaves out of the converted manifest what KubeOne would have taken from the
// Terraform output instead, which slipway would refuse to find in both places, and refuses what
// KubeOne combines from both and slipway cannot.
func (c *converter) terraform(k *cluster, out *v1beta1.Cluster) {
	tf := c.tf
	if tf.ClusterName != "" && k.Name != "" && k.Name != tf.ClusterName {
		out.Name = ""
		c.warn(field.NewPath("name"), "left out: KubeOne named the cluster %q after the Terraform output's cluster_name, not %q, and so does slipway", tf.ClusterName, k.Name)
	}
	if tf.Endpoint != "" && k.APIEndpoint.Host != "" && k.APIEndpoint.Host != tf.Endpoint {
		out.APIEndpoint.Host = ""
		c.warn(field.NewPath("apiEndpoint", "host"), "left out: KubeOne used the Terraform output's kubeone_api endpoint %q, not %q, and so does slipway", tf.Endpoint, k.APIEndpoint.Host)
	}
	if tf.AlternativeNames && len(k.APIEndpoint.AlternativeNames) > 0 {
		out.APIEndpoint.AlternativeNames = nil
		c.warn(field.NewPath("apiEndpoint", "alternativeNames"), "left out: KubeOne used the Terraform output's apiserver_alternative_names instead, and so does slipway")
	}
	if tf.ControlPlaneHosts && len(k.ControlPlane.Hosts) > 0 {
		out.ControlPlane.Hosts = nil
		c.warn(field.NewPath("controlPlane", "hosts"), "left out: KubeOne used the Terraform output's control-plane hosts (kubeone_hosts) instead of these %d, and so does slipway", len(k.ControlPlane.Hosts))
	}
	if tf.StaticWorkerHosts && len(k.StaticWorkers.Hosts) > 0 {
		c.errs = append(c.errs, field.Forbidden(field.NewPath("staticWorkers", "hosts"),
			"KubeOne adds the Terraform output's kubeone_static_workers to these hosts; slipway takes static workers from one place only, "+
				"so move these hosts into the Terraform output, or the output's into this manifest, before you migrate"))
	}
}
