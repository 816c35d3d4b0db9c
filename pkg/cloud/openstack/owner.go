package openstack

import (
	"sync"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"k8s.io/apimachinery/pkg/types"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

// ClusterUIDKey is the server metadata key, and the prefix of the Nova tag
// "slipway-cluster-uid=<uid>", that holds the UID of the cluster a server belongs to. Cluster
// names repeat (every test cluster is called "test"); this UID does not.
const ClusterUIDKey = "slipway-cluster-uid"

// owner is how the provider recognises what it made: servers by their metadata, ports and
// floating IPs by their description, always as the cloud reports them now. What a Machine's
// state annotation records is only where to look; it never proves ownership, because whoever
// may write the annotation could otherwise point a delete at anything in the project.
type owner struct {
	clusterUID string
}

// tag is the Nova tag of the cluster's servers.
func (o owner) tag() string { return ClusterUIDKey + "=" + o.clusterUID }

// nameTag is the informational Nova tag with the cluster's name.
func nameTag(cluster string) string { return ClusterKey + "=" + cluster }

// marker is the description of the ports and floating IPs made for a Machine, by which a
// resumed create finds them when their IDs were never recorded, and a delete checks them.
func (o owner) marker(m *v1alpha1.Machine) string {
	return "slipway cluster-uid=" + o.clusterUID + " machine-uid=" + string(m.UID)
}

// cluster reports whether a server's metadata names this cluster.
func (o owner) cluster(md map[string]string) bool { return md[ClusterUIDKey] == o.clusterUID }

// server reports whether srv was made by this cluster for the Machine uid.
func (o owner) server(srv *servers.Server, uid types.UID) bool {
	return uid != "" && o.cluster(srv.Metadata) && srv.Metadata[MachineUIDKey] == string(uid)
}

// volumeSet remembers, per Machine UID, the boot volumes this process saw attached to the
// Machine's own server: the only proof of ownership a detached volume can have.
type volumeSet struct {
	mu  sync.Mutex
	ids map[types.UID]map[string]bool
}

func (v *volumeSet) confirm(uid types.UID, ids ...string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ids == nil {
		v.ids = map[types.UID]map[string]bool{}
	}
	if v.ids[uid] == nil {
		v.ids[uid] = map[string]bool{}
	}
	for _, id := range ids {
		v.ids[uid][id] = true
	}
}

func (v *volumeSet) confirmed(uid types.UID, id string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.ids[uid][id]
}

func (v *volumeSet) forget(uid types.UID) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.ids, uid)
}
