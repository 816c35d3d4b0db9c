package openstack

import (
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/slipway-dev/slipway/pkg/cloud"
)

// ttlCache remembers answers for a short while and merges concurrent identical requests, so
// that creating hundreds of machines from one template asks the cloud once. Definite answers
// (found, or a terminal error such as "no such flavor") are cached; transient errors are not.
type ttlCache struct {
	ttl   time.Duration
	now   func() time.Time
	group singleflight.Group
	mu    sync.Mutex
	items map[string]cacheItem
}

type cacheItem struct {
	val     any
	err     error
	expires time.Time
}

func newTTLCache(ttl time.Duration, now func() time.Time) *ttlCache {
	return &ttlCache{ttl: ttl, now: now, items: map[string]cacheItem{}}
}

func (c *ttlCache) get(key string, fetch func() (any, error)) (any, error) {
	c.mu.Lock()
	it, ok := c.items[key]
	c.mu.Unlock()
	if ok && c.now().Before(it.expires) {
		return it.val, it.err
	}
	v, err, _ := c.group.Do(key, func() (any, error) {
		v, err := fetch()
		if _, terminal := cloud.AsTerminal(err); err == nil || terminal {
			c.mu.Lock()
			c.items[key] = cacheItem{val: v, err: err, expires: c.now().Add(c.ttl)}
			if len(c.items) > 4096 {
				c.sweep()
			}
			c.mu.Unlock()
		}
		return v, err
	})
	return v, err
}

// sweep drops expired items; callers hold c.mu.
func (c *ttlCache) sweep() {
	now := c.now()
	for k, it := range c.items {
		if !now.Before(it.expires) {
			delete(c.items, k)
		}
	}
}

// cached is a typed front for ttlCache.get.
func cached[T any](c *ttlCache, key string, fetch func() (T, error)) (T, error) {
	v, err := c.get(key, func() (any, error) { return fetch() })
	t, _ := v.(T)
	return t, err
}
