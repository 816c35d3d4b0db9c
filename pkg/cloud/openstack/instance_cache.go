package openstack

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/slipway-dev/slipway/pkg/cloud"
)

// instanceCache remembers what Create and Get last said about a building or running server.
// A controller reconciles a Machine many times as its own status patches and the Node's changes
// come back as events, and it asks Get every time.
//
// A building server is kept for buildingTTL (2s by default), shorter than the controller's
// poll, so the reconciles that events trigger right after a create are answered from memory
// while every poll still sees the build finish.
//
// A running server is not kept by default (runningTTL < 0): the controller does not poll a
// running Machine, it reacts to events, and the event that matters (the Node going NotReady
// because the server was deleted behind its back) would be answered with the stale "running" and
// not come again. A positive runningTTL trades that for fewer calls (see test/bench/openstack.md).
//
// An ERROR server, one being deleted, or one not found is never cached.
type instanceCache struct {
	runningTTL  time.Duration
	buildingTTL time.Duration
	now         func() time.Time
	mu          sync.Mutex
	byUID       map[types.UID]cachedInstance
}

type cachedInstance struct {
	inst cloud.Instance
	at   time.Time
}

func (c *instanceCache) ttl(s cloud.InstanceState) time.Duration {
	switch s {
	case cloud.StateRunning:
		return c.runningTTL
	case cloud.StateCreating:
		return c.buildingTTL
	}
	return 0
}

func (c *instanceCache) get(uid types.UID) (*cloud.Instance, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byUID[uid]
	if !ok || c.now().Sub(e.at) >= c.ttl(e.inst.State) {
		delete(c.byUID, uid)
		return nil, false
	}
	inst := e.inst
	inst.Addresses = append(inst.Addresses[:0:0], e.inst.Addresses...)
	return &inst, true
}

func (c *instanceCache) put(uid types.UID, inst *cloud.Instance) {
	if c.ttl(inst.State) <= 0 {
		c.forget(uid)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.byUID) > 10000 {
		c.byUID = map[types.UID]cachedInstance{}
	}
	cp := *inst
	cp.Addresses = append(inst.Addresses[:0:0], inst.Addresses...)
	c.byUID[uid] = cachedInstance{inst: cp, at: c.now()}
}

func (c *instanceCache) forget(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byUID, uid)
}

// ownedServers remembers, per Machine, the server that the cloud last showed carrying the
// Machine's marker. A server's ID is never reused, so that answer stays true for as long as the
// server exists, and the first delete call can send its DELETE without a GET to check the
// marker again. Only the cloud's answers fill it: a Machine's records (which whoever may write
// the Machine can change) never do.
type ownedServers struct {
	mu    sync.Mutex
	byUID map[types.UID]string
}

func (o *ownedServers) put(uid types.UID, serverID string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.byUID == nil || len(o.byUID) > 10000 {
		o.byUID = map[types.UID]string{}
	}
	o.byUID[uid] = serverID
}

// take reports whether serverID is the Machine's as the cloud last showed, and forgets it.
func (o *ownedServers) take(uid types.UID, serverID string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	id, ok := o.byUID[uid]
	delete(o.byUID, uid)
	return ok && id == serverID
}

func (o *ownedServers) forget(uid types.UID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.byUID, uid)
}
