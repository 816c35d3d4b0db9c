package openstacktest

import (
	"math"
	"slices"
)

// quotaItem is one quota of one service, named as that service names it: where its limit is
// set (or a fixed limit) and how its usage is counted.
type quotaItem struct {
	service string
	name    string
	limit   func(*Quota) int
	fixed   int
	used    func(*state) int
	// until is the first Nova microversion that no longer reports the item; 0 if none.
	until microversion
}

func count[T any](m map[string]*T) int { return len(m) }

// quotaItems lists every quota the APIs report. The fixed Nova items are Nova's defaults.
var quotaItems = []quotaItem{
	{service: serviceCompute, name: "instances", limit: func(q *Quota) int { return q.Instances },
		used: func(st *state) int { return len(st.servers) }},
	{service: serviceCompute, name: "cores", limit: func(q *Quota) int { return q.Cores },
		used: func(st *state) int { return st.flavorSum(func(f *Flavor) int { return f.VCPUs }) }},
	{service: serviceCompute, name: "ram", limit: func(q *Quota) int { return q.RAMMiB },
		used: func(st *state) int { return st.flavorSum(func(f *Flavor) int { return f.RAM }) }},
	{service: serviceCompute, name: "key_pairs", limit: func(q *Quota) int { return q.KeyPairs },
		used: func(st *state) int { return len(st.keypairs) }},
	{service: serviceCompute, name: "server_groups", limit: func(q *Quota) int { return q.ServerGroups },
		used: func(st *state) int { return len(st.servergroups) }},
	{service: serviceCompute, name: "server_group_members", limit: func(q *Quota) int { return q.ServerGroupMembers }},
	{service: serviceCompute, name: "metadata_items", fixed: maxServerMetadata},
	{service: serviceCompute, name: "injected_files", fixed: 5, until: 57},
	{service: serviceCompute, name: "injected_file_content_bytes", fixed: 10240, until: 57},
	{service: serviceCompute, name: "injected_file_path_bytes", fixed: 255, until: 57},
	{service: serviceCompute, name: "fixed_ips", fixed: -1, until: 36},
	{service: serviceCompute, name: "floating_ips", fixed: -1, until: 36},
	{service: serviceCompute, name: "security_groups", fixed: -1, until: 36},
	{service: serviceCompute, name: "security_group_rules", fixed: -1, until: 36},
	{service: serviceNetwork, name: "network", limit: func(q *Quota) int { return q.Networks },
		used: func(st *state) int { return count(st.networks) }},
	{service: serviceNetwork, name: "subnet", limit: func(q *Quota) int { return q.Subnets },
		used: func(st *state) int { return count(st.subnets) }},
	{service: serviceNetwork, name: "port", limit: func(q *Quota) int { return q.Ports },
		used: func(st *state) int { return count(st.ports) }},
	{service: serviceNetwork, name: "router", limit: func(q *Quota) int { return q.Routers },
		used: func(st *state) int { return count(st.routers) }},
	{service: serviceNetwork, name: "floatingip", limit: func(q *Quota) int { return q.FloatingIPs },
		used: func(st *state) int { return count(st.fips) }},
	{service: serviceNetwork, name: "security_group", limit: func(q *Quota) int { return q.SecurityGroups },
		used: func(st *state) int { return count(st.secgroups) }},
	{service: serviceNetwork, name: "security_group_rule", limit: func(q *Quota) int { return q.SecurityGroupRules },
		used: func(st *state) int { return count(st.sgRules) }},
	{service: serviceNetwork, name: "subnetpool", fixed: -1},
	{service: serviceNetwork, name: "rbac_policy", fixed: -1},
	{service: serviceVolume, name: "volumes", limit: func(q *Quota) int { return q.Volumes },
		used: func(st *state) int { return count(st.volumes) }},
	{service: serviceVolume, name: "gigabytes", limit: func(q *Quota) int { return q.Gigabytes },
		used: func(st *state) int {
			n := 0
			for _, v := range st.volumes {
				n += v.Size
			}
			return n
		}},
	{service: serviceVolume, name: "snapshots", fixed: -1},
	{service: serviceVolume, name: "backups", fixed: -1},
	{service: serviceVolume, name: "backup_gigabytes", fixed: -1},
	{service: serviceVolume, name: "groups", fixed: -1},
	{service: serviceVolume, name: "per_volume_gigabytes", fixed: -1},
}

// maxServerMetadata is Nova's metadata_items quota.
const maxServerMetadata = 128

// reported is the limit as the APIs show it: -1 for unlimited.
func (it quotaItem) reported(q *Quota) int {
	if it.limit == nil {
		return it.fixed
	}
	if n := it.limit(q); n > 0 {
		return n
	}
	return -1
}

func (it quotaItem) usage(st *state) int {
	if it.used == nil {
		return 0
	}
	return it.used(st)
}

// quotaItemsOf lists a service's quotas, at a Nova microversion for compute.
func quotaItemsOf(service string, mv microversion) []quotaItem {
	var out []quotaItem
	for _, it := range quotaItems {
		if it.service == service && (it.until == 0 || mv < it.until) {
			out = append(out, it)
		}
	}
	return out
}

// quotaItemNamed finds one quota; the names are this file's, so a miss is a programming error.
func quotaItemNamed(service, name string) quotaItem {
	i := slices.IndexFunc(quotaItems, func(it quotaItem) bool { return it.service == service && it.name == name })
	return quotaItems[i]
}

// quotaLimit is the enforced limit of a quota: math.MaxInt when unlimited. Callers hold s.mu.
func (s *Sim) quotaLimit(service, name string) int {
	if n := quotaItemNamed(service, name).reported(&s.st.quota); n >= 0 {
		return n
	}
	return math.MaxInt
}

func (st *state) flavorSum(f func(*Flavor) int) int {
	n := 0
	for _, srv := range st.servers {
		if fl := st.flavors[srv.FlavorID]; fl != nil {
			n += f(fl)
		}
	}
	return n
}
