package sandboxapi

import (
	"encoding/json"
	"sort"
)

// tfOutput renders the sandbox in slipway's Terraform output contract: what `terraform output
// -json` prints for slipway_api, slipway_hosts and slipway_static_workers. slipway reads only
// each output's value; type is filled in the way Terraform describes such values.
func (sb *Sandbox) tfOutput() ([]byte, error) {
	out := map[string]any{
		"slipway_api": output(map[string]any{
			"endpoint":          sb.Endpoint,
			"alternative_names": []any{},
		}),
		"slipway_hosts": output(map[string]any{"control_plane": sb.pool(ControlPlane)}),
	}
	if len(sb.hostsWith(Worker)) > 0 {
		out["slipway_static_workers"] = output(map[string]any{"workers": sb.pool(Worker)})
	}
	data, err := json.MarshalIndent(out, "", "  ")
	return append(data, '\n'), err
}

// pool is one group of hosts in the contract's shape.
func (sb *Sandbox) pool(role Role) map[string]any {
	var ips, names, keys []any
	cloud := "none"
	if sb.Pool != nil {
		cloud = "openstack" // the manifest's cloudProvider, which Terraform output must not contradict
	}
	for _, h := range sb.hostsWith(role) {
		ips = append(ips, h.IP)
		names = append(names, h.Name)
		keys = append(keys, h.HostKey)
	}
	return map[string]any{
		"cluster_name":         sb.Name,
		"cloud_provider":       cloud,
		"public_address":       ips,
		"private_address":      ips,
		"hostnames":            names,
		"ssh_user":             "root",
		"ssh_port":             22,
		"ssh_private_key_file": sb.Path(KeyFile),
		"ssh_agent_socket":     "",
		"ssh_host_keys":        keys,
		"bastion":              "",
		"bastion_port":         22,
		"bastion_user":         "",
		"bastion_host_key":     "",
		"labels":               map[string]any{},
		"taints":               []any{},
	}
}

func output(value any) map[string]any {
	return map[string]any{"sensitive": false, "type": tfType(value), "value": value}
}

// tfType describes a value in Terraform's JSON type syntax: "string", "number", "bool",
// ["tuple", [...]], ["object", {...}].
func tfType(v any) any {
	switch v := v.(type) {
	case string:
		return "string"
	case int:
		return "number"
	case bool:
		return "bool"
	case []any:
		elems := make([]any, 0, len(v))
		for _, e := range v {
			elems = append(elems, tfType(e))
		}
		return []any{"tuple", elems}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		attrs := map[string]any{}
		for _, k := range keys {
			attrs[k] = tfType(v[k])
		}
		return []any{"object", attrs}
	}
	return "dynamic"
}
