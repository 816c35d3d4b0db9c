package sandboxapi

import (
	"bytes"
	"text/template"
)

// manifestTemplate is the demo manifest. The manifest API is young: this one template is the
// only place that knows its field names.
var manifestTemplate = template.Must(template.New("slipway.yaml").Parse(`# Demo manifest for the sandbox {{.Name}}; hosts come from tf.json:
#   slipway apply -m {{.Dir}}/slipway.yaml -t {{.Dir}}/tf.json
# The sandbox's hosts are containers, which slipway must be told about twice: they resolve
# through Docker's 127.0.0.11, loopback inside pods (upstreamDNS gives the kubelet and CoreDNS a
# real resolver instead, or CoreDNS forwards to itself), and nf_conntrack_max is read-only in them
# (conntrackMaxPerCore: 0 keeps kube-proxy from setting it). They also share the machine's disk,
# so the kubelet's disk-pressure eviction is off (as in kind): otherwise a machine with less than
# 15% free disk evicts every pod.
apiVersion: slipway.dev/v1beta1
kind: Cluster
name: {{.Name}}
versions:
  kubernetes: {{.Kubernetes}}
clusterNetwork:
  cni:
    flannel: {}
  upstreamDNS: ["{{.Assets.IP}}"]
  kubeProxy:
    conntrackMaxPerCore: 0
kubelet:
{{- if .CgroupV1}}
  # This machine's Docker runs its containers on cgroup v1, which kubelets refuse from v1.35 on
  # unless allowed (the hosts cannot be moved to cgroup v2 without moving the machine).
  allowCgroupV1: true
{{- end}}
  evictionHard:
    memory.available: 100Mi
    nodefs.available: "0%"
    nodefs.inodesFree: "0%"
    imagefs.available: "0%"
{{- with .Pool}}
# The workers are a pool of OpenStack servers, which slipway's machine-controller creates from
# the MachineDeployment that apply makes of workers below. apply and reset read the cloud's
# credentials from the OS_* variables: make demo runs the OpenStack simulator
# (test/openstack-sim) and writes them to openstack/openrc.sh in this directory. Its servers boot
# as hosts beside the control planes, on this sandbox's own network: the cloud's provider network
# "{{.Network}}". The control planes are not servers of the cloud: the cloud-controller-manager
# cannot initialize them, so they keep the node.cloudprovider.kubernetes.io/uninitialized taint
# (the machine-controller tolerates it).
cloudProvider:
  openstack: {}
  external: true
{{- else}}
cloudProvider:
  none: {}
{{- end}}
# No internet registry is reachable: the sandbox registry serves the control-plane images and the
# OpenStack cloud-controller-manager under their registry.k8s.io names, and flannel's and the
# machine-controller of this checkout (the default machineController.image) under their ghcr.io
# names.
# containerd 2, which Kubernetes v1.36 needs, comes from the sandbox too, as a release tarball; the
# hosts' own containerd is Debian's 1.6, which slipway replaces when it has to.
containerRuntime:
  containerd:
    release:
      baseURL: "{{.Assets.ContainerdReleases}}"
      insecure: true
    registries:
      registry.k8s.io:
        mirrors: ["{{.Assets.Registry}}"]
        tlsConfig:
          insecureSkipVerify: true
      ghcr.io:
        mirrors: ["{{.Assets.Registry}}"]
        tlsConfig:
          insecureSkipVerify: true
# The sandbox serves them over plain http from a container on its own network: insecure says
# that this is on purpose (slipway refuses http downloads otherwise).
assets:
  # apt repositories laid out like pkgs.k8s.io: {{.Assets.Files}}/core:/stable:/<minor>/deb/
  packages:
    baseURL: "{{.Assets.Files}}"
    insecure: true
  # or binaries laid out like dl.k8s.io/release:
  # url:
  #   baseURL: "{{.Assets.Files}}/release"
  #   insecure: true
{{- with .Pool}}
# debian-12 and m1.small are among the simulator's images and flavors; every image boots the
# sandbox's node image.
workers:
  - name: pool1
    replicas: {{.Replicas}}
    providerSpec:
      cloudProviderSpec: {image: debian-12, flavor: m1.small, network: {{.Network}}, securityGroups: [default]}
      operatingSystem: debian
{{- end}}
`))

func (sb *Sandbox) manifest() ([]byte, error) {
	var buf bytes.Buffer
	err := manifestTemplate.Execute(&buf, struct {
		*Sandbox
		Dir string
	}{sb, sb.Dir})
	return buf.Bytes(), err
}
