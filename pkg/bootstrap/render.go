package bootstrap

import (
	"bytes"
	_ "embed"
	"fmt"
	"strings"
	"text/template"

	"sigs.k8s.io/yaml"
)

//go:embed bootstrap.sh.tmpl
var scriptTemplate string

var script = template.Must(template.New("bootstrap.sh").Parse(scriptTemplate))

// Render returns the cloud-init user-data for c.
func Render(c Config) (string, error) {
	v, err := c.validate()
	if err != nil {
		return "", err
	}
	repo := fmt.Sprintf("%s/core:/stable:/v%d.%d/deb/", strings.TrimSuffix(c.PackageRepository, "/"), v.Major(), v.Minor())
	gpgPackage := "gpg"
	if c.OperatingSystem == "debian" {
		gpgPackage = "gnupg"
	}
	var sh bytes.Buffer
	if err := script.Execute(&sh, map[string]string{
		"Repo":       repo,
		"Version":    v.String(),
		"GPGPackage": gpgPackage,
	}); err != nil {
		return "", fmt.Errorf("rendering bootstrap script: %w", err)
	}
	join, err := joinConfiguration(c)
	if err != nil {
		return "", err
	}
	doc := map[string]any{
		"package_update":  true,
		"package_upgrade": c.DistUpgradeOnBoot,
		"write_files": []map[string]string{
			{"path": "/etc/modules-load.d/kubernetes.conf", "permissions": "0644", "content": "overlay\nbr_netfilter\n"},
			{"path": "/etc/sysctl.d/90-kubernetes.conf", "permissions": "0644", "content": "net.bridge.bridge-nf-call-iptables = 1\n" +
				"net.bridge.bridge-nf-call-ip6tables = 1\nnet.ipv4.ip_forward = 1\n"},
			{"path": "/etc/apt/sources.list.d/kubernetes.list", "permissions": "0644",
				"content": "deb [signed-by=/etc/apt/keyrings/kubernetes-apt-keyring.gpg] " + repo + " /\n"},
			{"path": "/etc/kubernetes/join.yaml", "permissions": "0600", "content": join},
			{"path": "/usr/local/sbin/slipway-join", "permissions": "0700", "content": sh.String()},
		},
		"runcmd": []string{"/usr/local/sbin/slipway-join"},
	}
	if len(c.SSHPublicKeys) > 0 {
		doc["ssh_authorized_keys"] = c.SSHPublicKeys
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return "", fmt.Errorf("encoding cloud-config: %w", err)
	}
	return "#cloud-config\n" + string(out), nil
}

// joinConfiguration is kubeadm's v1beta4 JoinConfiguration for the node.
func joinConfiguration(c Config) (string, error) {
	taints := []map[string]string{}
	for _, t := range c.Taints {
		m := map[string]string{"key": t.Key, "effect": t.Effect}
		if t.Value != "" {
			m["value"] = t.Value
		}
		taints = append(taints, m)
	}
	reg := map[string]any{"taints": taints}
	if c.ExternalCloudProvider {
		reg["kubeletExtraArgs"] = []map[string]string{{"name": "cloud-provider", "value": "external"}}
	}
	cfg := map[string]any{
		"apiVersion": "kubeadm.k8s.io/v1beta4",
		"kind":       "JoinConfiguration",
		"discovery": map[string]any{
			"bootstrapToken": map[string]any{
				"apiServerEndpoint": c.APIServerEndpoint,
				"token":             c.Token,
				"caCertHashes":      []string{c.CACertHash},
			},
		},
		"nodeRegistration": reg,
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return "", fmt.Errorf("encoding JoinConfiguration: %w", err)
	}
	return string(out), nil
}
