package openstack

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
)

// StateAnnotation holds, as JSON, what the provider allocated for a Machine. It is written
// before and after every allocation, so a restarted controller resumes a create and a delete
// releases everything.
const StateAnnotation = "openstack" + cloud.StateAnnotationSuffix

// record is the content of StateAnnotation. A *Pending flag means a request that allocates the
// thing may have been sent without its ID being recorded yet; the provider then searches by
// name (servers) or by description (ports, floating IPs) before doing anything else.
type record struct {
	ServerID          string   `json:"serverID,omitempty"`
	ServerPending     bool     `json:"serverPending,omitempty"`
	PortID            string   `json:"portID,omitempty"`
	PortPending       bool     `json:"portPending,omitempty"`
	FloatingIPs       []string `json:"floatingIPs,omitempty"`
	FloatingIPPending bool     `json:"floatingIPPending,omitempty"`
	VolumeIDs         []string `json:"volumeIDs,omitempty"`
	// Attempts counts the servers created for the Machine, ERROR ones included.
	Attempts int `json:"attempts,omitempty"`
	// RetryAt delays the next server after an ERROR one.
	RetryAt *time.Time `json:"retryAt,omitempty"`
	// LastFault is the Nova fault of the last ERROR server.
	LastFault string `json:"lastFault,omitempty"`
	// Replacing is set from deleting an ERROR server until its successor is sent.
	Replacing bool `json:"replacing,omitempty"`

	// derived records were not written by the provider but rebuilt from the Machine's
	// providerID (a Machine that lost its annotation, or one the orphan sweep made up for a
	// server without a Machine) or from the marks another machine-controller left on it
	// (v1alpha1.ServerMadeElsewhere): what else was allocated must be searched for.
	derived bool
}

// empty reports whether nothing was ever allocated or attempted.
func (r *record) empty() bool {
	return r.ServerID == "" && !r.ServerPending && r.PortID == "" && !r.PortPending &&
		len(r.FloatingIPs) == 0 && !r.FloatingIPPending && len(r.VolumeIDs) == 0
}

func (r *record) clone() *record {
	c := *r
	c.FloatingIPs, c.VolumeIDs = slices.Clone(r.FloatingIPs), slices.Clone(r.VolumeIDs)
	c.derived = false
	return &c
}

// records remembers the last record written per Machine UID in this process. The Machine a
// controller passes in may come from an informer cache that has not seen the provider's last
// write yet; trusting that copy could create a second server. After a restart the cache is
// filled from a fresh list, which has every write.
type records struct {
	mu  sync.Mutex
	out map[types.UID]*record
}

func newRecords() *records { return &records{out: map[types.UID]*record{}} }

// load returns the Machine's record: this process's last write, else the annotation.
func (rs *records) load(m *v1alpha1.Machine) (*record, error) {
	rs.mu.Lock()
	r, ok := rs.out[m.UID]
	rs.mu.Unlock()
	if ok {
		return r.clone(), nil
	}
	r = &record{}
	if v := m.Annotations[StateAnnotation]; v != "" {
		if err := json.Unmarshal([]byte(v), r); err != nil {
			return nil, cloud.Terminal(v1alpha1.InvalidConfigurationMachineError,
				"annotation %s is not valid: %v", StateAnnotation, err)
		}
		return r, nil
	}
	if m.Spec.ProviderID != nil {
		if id, ok := strings.CutPrefix(*m.Spec.ProviderID, "openstack:///"); ok && id != "" {
			r.ServerID, r.derived = id, true
		}
	} else if v1alpha1.ServerMadeElsewhere(m) {
		// Another machine-controller may have sent a create that nothing here recorded: look
		// for the server by name, as after a create of our own whose ID was never recorded.
		r.ServerPending, r.derived = true, true
	}
	return r, nil
}

// save writes r to the Machine through update and remembers it.
func (rs *records) save(ctx context.Context, m *v1alpha1.Machine, update cloud.MachineUpdater, r *record) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	mutate := func(mm *v1alpha1.Machine) {
		if mm.Annotations == nil {
			mm.Annotations = map[string]string{}
		}
		if r.empty() && r.Attempts == 0 {
			delete(mm.Annotations, StateAnnotation)
			return
		}
		mm.Annotations[StateAnnotation] = string(data)
	}
	if err := update(ctx, mutate); err != nil {
		return fmt.Errorf("recording allocated resources on machine %s/%s: %w", m.Namespace, m.Name, err)
	}
	rs.mu.Lock()
	rs.out[m.UID] = r.clone()
	rs.mu.Unlock()
	return nil
}

// forget drops the memory of a Machine whose resources are all released.
func (rs *records) forget(uid types.UID) {
	rs.mu.Lock()
	delete(rs.out, uid)
	rs.mu.Unlock()
}

func jsonOf(r *record) (string, error) {
	b, err := json.Marshal(r)
	return string(b), err
}
