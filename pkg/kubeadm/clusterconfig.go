package kubeadm

import (
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// PatchClusterConfig sets the API servers' --etcd-servers (see etcdServers) in an existing
// ClusterConfiguration, such as the kubeadm-config ConfigMap's "ClusterConfiguration" key, and
// keeps every other field. kubeadm renders each control plane's API server from that document
// during `kubeadm upgrade`, so a cluster installed before slipway listed every etcd member gets
// the list as its control planes are upgraded (and so its next upgrade does not stall on
// restarting etcd members). changed is false when nothing was to change: a one-control-plane
// cluster, or one that already has the list.
func PatchClusterConfig(existing []byte, c *v1beta1.Cluster) (out []byte, changed bool, err error) {
	want := etcdServers(c)
	if want == "" {
		return existing, false, nil
	}
	var doc map[string]any
	if err := yaml.Unmarshal(existing, &doc); err != nil {
		return nil, false, fmt.Errorf("decoding the existing ClusterConfiguration: %w", err)
	}
	if kind, _ := doc["kind"].(string); kind != "ClusterConfiguration" {
		return nil, false, fmt.Errorf("the existing document is a %q, not a ClusterConfiguration", kind)
	}
	apiServer, _ := doc["apiServer"].(map[string]any)
	if apiServer == nil {
		apiServer = map[string]any{}
		doc["apiServer"] = apiServer
	}
	switch args := apiServer["extraArgs"].(type) {
	case nil:
		apiServer["extraArgs"] = []any{map[string]any{"name": "etcd-servers", "value": want}}
	case map[string]any: // v1beta3: a map of flag to value
		if args["etcd-servers"] == want {
			return existing, false, nil
		}
		args["etcd-servers"] = want
	case []any: // v1beta4: a list of {name, value}
		found := false
		for _, a := range args {
			m, _ := a.(map[string]any)
			if m == nil || m["name"] != "etcd-servers" {
				continue
			}
			if m["value"] == want {
				return existing, false, nil
			}
			m["value"], found = want, true
		}
		if !found {
			apiServer["extraArgs"] = append(args, map[string]any{"name": "etcd-servers", "value": want})
		}
	default:
		return nil, false, fmt.Errorf("the existing ClusterConfiguration's apiServer.extraArgs is a %T, neither a list nor a map", args)
	}
	out, err = yaml.Marshal(doc)
	if err != nil {
		return nil, false, fmt.Errorf("encoding the ClusterConfiguration: %w", err)
	}
	return out, true, nil
}
