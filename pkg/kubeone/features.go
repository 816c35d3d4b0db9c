package kubeone

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

func (c *converter) addons(k *cluster, out *v1beta1.Cluster) {
	p := field.NewPath("addons")
	for i, r := range k.HelmReleases {
		c.warn(field.NewPath("helmReleases").Index(i), "not supported: slipway does not install Helm charts; %s keeps running, manage it with helm", release(r))
	}
	a := k.Addons
	if a == nil {
		return
	}
	enabled := a.Enable == nil || *a.Enable
	if a.Path != "" && enabled {
		out.Addons = &v1beta1.Addons{Path: a.Path}
		c.warn(p.Child("path"), "carried over; slipway renders the manifests as Go templates over its own values (addons.path in config print --full), not KubeOne's "+
			"({{ .Config ... }}, {{ .Params ... }}): apply stops at a file that uses those, naming it, so rewrite them first; "+
			"objects that leave the folder are pruned once slipway has applied them")
	}
	if a.Path != "" && !enabled {
		c.warn(p.Child("enable"), "false, so addons.path is left out as KubeOne ignored it")
	}
	if len(a.GlobalParams) > 0 {
		c.warn(p.Child("globalParams"), "not supported: slipway's addon templates see only its own values (addons.path in config print --full)")
	}
	for i, ref := range a.Addons {
		ap := p.Child("addons").Index(i)
		switch {
		case ref["helmRelease"] != nil:
			r, _ := ref["helmRelease"].(map[string]any)
			c.warn(ap.Child("helmRelease"), "not supported: slipway does not install Helm charts; %s keeps running, manage it with helm", release(r))
		case ref["addon"] != nil:
			c.warn(ap.Child("addon"), "not supported: slipway has no built-in addons (KubeOne's %v); the objects keep running, manage them yourself", name(ref["addon"]))
		default: // v1beta2: the addon's fields are the entry itself
			c.warn(ap, "not supported: slipway has no built-in addons (KubeOne's %v); the objects keep running, manage them yourself", ref["name"])
		}
	}
}

// release names a KubeOne Helm release as helm list shows it: its release name, which KubeOne
// defaults to the chart's name, with its chart and namespace.
func release(r map[string]any) string {
	str := func(k string) string { s, _ := r[k].(string); return s }
	name, chart := str("releaseName"), str("chart")
	if name == "" {
		name = chart
	}
	if name == "" {
		return "the release"
	}
	s := "release " + name
	var about []string
	if chart != "" && chart != name {
		about = append(about, "chart "+chart)
	}
	if ns := str("namespace"); ns != "" {
		about = append(about, "namespace "+ns)
	}
	if len(about) > 0 {
		s += " (" + strings.Join(about, ", ") + ")"
	}
	return s
}

func name(v any) any {
	if m, ok := v.(map[string]any); ok {
		return m["name"]
	}
	return v
}

// features warns about every KubeOne feature that is set, and about the two KubeOne turns on by
// default (metrics-server, NodeLocal DNSCache) unless they are turned off: slipway installs
// neither, and leaves running ones alone.
func (c *converter) features(k *cluster) {
	f := &k.Features
	p := field.NewPath("features")
	type feature struct {
		name    string
		value   map[string]any
		message string
	}
	for _, ft := range []feature{
		{"coreDNS", f.CoreDNS, "not supported: slipway runs CoreDNS as kubeadm installs it (two replicas, the image under registryConfiguration.overwriteRegistry)"},
		{"alwaysPullImages", f.AlwaysPullImages, "not supported: slipway does not configure admission plugins"},
		{"eventRateLimit", f.EventRateLimit, "not supported: slipway does not configure admission plugins"},
		{"podNodeSelector", f.PodNodeSelector, "not supported: slipway does not configure admission plugins"},
		{"podSecurityPolicy", f.PodSecurityPolicy, "no longer needed: Kubernetes removed PodSecurityPolicy in v1.25"},
		{"staticAuditLog", f.StaticAuditLog, "not supported: slipway does not configure API server auditing"},
		{"dynamicAuditLog", f.DynamicAuditLog, "no longer needed: Kubernetes removed dynamic auditing"},
		{"webhookAuditLog", f.WebhookAuditLog, "not supported: slipway does not configure API server auditing"},
		{"openidConnect", f.OpenIDConnect, "not supported: slipway does not configure the API server's OIDC flags"},
		{"encryptionProviders", f.EncryptionProviders, "not supported: slipway does not configure encryption at rest; a cluster whose Secrets are encrypted must keep its API server's --encryption-provider-config, which a slipway upgrade would drop"},
	} {
		if ft.value != nil && (ft.value["enable"] == nil || ft.value["enable"] == true) {
			c.warn(p.Child(ft.name), "%s", ft.message)
		}
	}
	if f.MetricsServer == nil || f.MetricsServer["enable"] != false {
		c.warn(p.Child("metricsServer"), "KubeOne deploys metrics-server by default; slipway does not (the running one is left as it is), manage it yourself")
	}
	if f.NodeLocalDNS == nil || f.NodeLocalDNS["deploy"] != false {
		c.warn(p.Child("nodeLocalDNS"), "KubeOne deploys NodeLocal DNSCache by default; slipway does not (the running one is left as it is), and new nodes' kubelets use the cluster DNS Service directly")
	}
}

// rest warns about the remaining top-level settings, none of which slipway has.
func (c *converter) rest(k *cluster) {
	if k.OperatingSystemManager != nil {
		c.warn(field.NewPath("operatingSystemManager"), "no longer needed: slipway's machine-controller writes the machines' user-data itself")
	}
	if k.CABundle != "" {
		c.warn(field.NewPath("caBundle"), "not supported: slipway does not distribute a CA bundle; hosts use their own trust store")
	}
	if k.CertificateAuthority != nil {
		c.warn(field.NewPath("certificateAuthority"), "not supported: slipway uses kubeadm's certificate validity periods and hosts' own trust store")
	}
	if s := k.SystemPackages; s != nil && s.ConfigureRepositories != nil && !*s.ConfigureRepositories {
		c.warn(field.NewPath("systemPackages", "configureRepositories"), "not supported: slipway configures the Kubernetes package repository (assets.packages.baseURL, which may be a mirror), or use assets.url or assets.upload")
	}
	if k.AssetConfiguration != nil {
		c.warn(field.NewPath("assetConfiguration"), "not supported (KubeOne removed it in v1beta2): use registryConfiguration.overwriteRegistry for images, and assets.url or assets.upload for binaries")
	}
	if len(k.LoggingConfig) > 0 {
		c.warn(field.NewPath("loggingConfig"), "not supported: slipway leaves the kubelet's container log rotation at its defaults")
	}
	if len(k.TLSCipherSuites) > 0 {
		c.warn(field.NewPath("tlsCipherSuites"), "not supported: slipway uses the components' default cipher suites")
	}
	if len(k.ControlPlaneComponents) > 0 {
		c.warn(field.NewPath("controlPlaneComponents"), "not supported: slipway does not pass extra flags or feature gates to the control plane; an upgrade renders the components without them")
	}
}
