package bootstrap

import (
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/pkg/kubeadm"
	"github.com/slipway-dev/slipway/pkg/scripts"
)

// Paths on the new machine.
const (
	nodeDir    = "/etc/slipway/node"
	joinConfig = "/run/slipway/join.yaml" // holds the bootstrap token: tmpfs, removed after the join
	runner     = "/usr/local/sbin/slipway-join"
)

// Render returns the cloud-init user-data for c. The machine is set up by the very scripts
// apply runs over SSH on a static worker (pkg/scripts: prerequisites, then kubelet, kubeadm and
// kubectl from the manifest's asset source), rendered for the Machine's operating system and
// kubelet version, and then joins with kubeadm through c.APIServerEndpoint.
func Render(c Config) (string, error) {
	v, err := c.validate()
	if err != nil {
		return "", err
	}
	cluster := c.Settings.Cluster
	cluster.Versions.Kubernetes = "v" + v.String()
	os := scripts.OS{ID: c.OperatingSystem}
	sandbox, err := kubeadm.PauseImage(&cluster)
	if err != nil {
		return "", fmt.Errorf("the sandbox image of kubelet %s: %w", cluster.Versions.Kubernetes, err)
	}
	// The registries' credentials and the proxy stay out of the user-data, which every pod on
	// the node can read from the metadata service: the scripts read them from files that the
	// runner fetches first, with the bootstrap token.
	creds, err := scripts.NodeCredentials(&cluster)
	if err != nil {
		return "", err
	}
	dir := ""
	if len(creds) > 0 {
		dir = credentialsDir
	}
	prereq, err := scripts.Prerequisites(os, scripts.PrereqParams{
		Cluster: &cluster, SandboxImage: sandbox, RegistryCAs: c.Settings.RegistryCAs, UpstreamDNS: cluster.ClusterNetwork.UpstreamDNS,
		CredentialsDir: dir,
	})
	if err != nil {
		return "", err
	}
	// Binary installs name the architecture in their URL. Pool machines are amd64: the runner
	// refuses any other before it downloads anything.
	install, err := scripts.InstallKubernetes(os, scripts.InstallParams{Cluster: &cluster, Arch: "amd64", CredentialsDir: dir})
	if err != nil {
		return "", err
	}
	// What apply ignores when it joins a static worker; SystemVerification on a cgroup v1 host
	// is added by the runner, which alone knows the host.
	ignores, err := kubeadm.PreflightIgnores(&cluster, false, kubeadm.HTTPProxyCIDRPreflight)
	if err != nil {
		return "", err
	}
	join, err := joinConfiguration(c, ignores)
	if err != nil {
		return "", err
	}
	files := []map[string]string{
		{"path": nodeDir + "/prerequisites.sh", "permissions": "0700", "content": prereq},
		{"path": nodeDir + "/install-kubernetes.sh", "permissions": "0700", "content": install},
		{"path": joinConfig, "permissions": "0600", "content": join},
		{"path": runner, "permissions": "0700", "content": runnerScript(cluster.Versions.Kubernetes, cluster.Kubelet.AllowCgroupV1, dir != "")},
	}
	if dir != "" {
		fetch, err := fetchConfiguration(c, sortedKeys(creds))
		if err != nil {
			return "", err
		}
		files = append(files,
			map[string]string{"path": fetcher, "permissions": "0700", "content": fetchScript},
			map[string]string{"path": fetchConfig, "permissions": "0600", "content": fetch})
	}
	doc := map[string]any{"write_files": files, "runcmd": []string{runner}}
	if c.DistUpgradeOnBoot {
		doc["package_update"], doc["package_upgrade"] = true, true
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

// runnerScript runs the setup and the join once; cloud-init runs it on the first boot only.
// Each line it prints goes to the console, where apply's error for a machine that did not join
// shows the last ones. On a cgroup v1 host it joins only when the manifest allows cgroup v1
// (kubelet.allowCgroupV1), ignoring kubeadm's SystemVerification as apply does there. With
// fetch, it first fetches the credentials the setup scripts read (see fetch-credentials.py)
// and removes them when it ends, however it ends: by then they are in containerd's root-only
// configuration, as on a static worker.
func runnerScript(version string, allowCgroupV1, fetch bool) string {
	cgroupV1 := `  say "this host runs cgroup v1, which kubelet ` + version + ` refuses unless the manifest sets kubelet.allowCgroupV1: true"
  exit 1`
	if allowCgroupV1 {
		cgroupV1 = `  say "cgroup v1 host, allowed by kubelet.allowCgroupV1"
  ignore+=(--ignore-preflight-errors=SystemVerification)`
	}
	credentials := ""
	if fetch {
		credentials = `trap 'rm -rf ` + credentialsDir + ` ` + fetchConfig + `' EXIT
say "registry credentials and proxy: from Secret ` + CredentialsNamespace + `/` + CredentialsSecret + `, with the bootstrap token"
command -v python3 >/dev/null || { say "FAILED: python3 is missing, which fetches them (cloud-init runs on it)"; exit 1; }
python3 ` + fetcher + ` ` + fetchConfig + ` || { say "without them this machine is not set up and does not join"; exit 1; }
rm -f ` + fetchConfig + `
`
	}
	return strings.NewReplacer("VERSION", version, "CGROUPV1", cgroupV1, "CREDENTIALS\n", credentials).Replace(`#!/bin/bash
# Written by slipway's machine-controller: sets this machine up as apply sets up a static
# worker, then joins the cluster as a Node with kubelet VERSION.
set -euo pipefail
say() { echo "slipway-join: $*"; }
case "$(uname -m)" in
  x86_64) ;;
  *) say "pool machines must be amd64, this one is $(uname -m)"; exit 1 ;;
esac
ignore=()
if [ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ]; then
CGROUPV1
fi
CREDENTIALS
say "prerequisites: swap, kernel modules, sysctls, containerd, CNI plugins"
` + nodeDir + `/prerequisites.sh
say "kubeadm, kubelet and kubectl VERSION"
` + nodeDir + `/install-kubernetes.sh
systemctl enable kubelet
if [ -e /etc/kubernetes/kubelet.conf ]; then
  say "already joined"
else
  say "kubeadm join"
  kubeadm join --config ` + joinConfig + ` "${ignore[@]}"
fi
rm -f ` + joinConfig + `
say "joined"
`)
}

// joinConfiguration is kubeadm's v1beta4 JoinConfiguration for the node.
func joinConfiguration(c Config, ignorePreflightErrors []string) (string, error) {
	taints := []map[string]string{}
	for _, t := range c.Taints {
		m := map[string]string{"key": t.Key, "effect": t.Effect}
		if t.Value != "" {
			m["value"] = t.Value
		}
		taints = append(taints, m)
	}
	reg := map[string]any{"taints": taints}
	if len(ignorePreflightErrors) > 0 {
		reg["ignorePreflightErrors"] = ignorePreflightErrors
	}
	if c.Settings.Cluster.CloudProvider.External {
		// The cloud-controller-manager initializes the Node, as it does the hosts'.
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
