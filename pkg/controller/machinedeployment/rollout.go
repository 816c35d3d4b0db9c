package machinedeployment

import (
	"math"
	"sort"
	"time"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

// setState is one MachineSet of a deployment as the rollout arithmetic sees it. count and
// available come from the cached Machines, spec from the cached set; the arithmetic stays on the
// safe side of a stale cache by counting max(spec, count) toward the surge bound and
// min(available, spec) toward the availability bound.
type setState struct {
	ms        *v1alpha1.MachineSet
	revision  int64
	spec      int32 // desired replicas, changed by the planning functions
	origSpec  int32
	count     int32 // Machines in the cache, including ones being deleted
	ready     int32 // Machines whose Node is Ready
	available int32 // Machines available (ready for minReadySeconds, not deleting)
}

func (s *setState) size() int32     { return max(s.spec, s.count) }
func (s *setState) effAvail() int32 { return min(s.available, s.spec) }

// rollout is the arithmetic of a RollingUpdate, adapted from the Deployment controller.
type rollout struct {
	replicas, maxSurge, maxUnavailable int32
	newSet                             *setState
	oldSets                            []*setState   // oldest revision first
	recheck                            time.Duration // when a ready Machine becomes available
}

func (p *rollout) all() []*setState {
	if p.newSet == nil {
		return p.oldSets
	}
	return append([]*setState{p.newSet}, p.oldSets...)
}

// machines is the most Machines that can exist right now: the surge bound is checked against it.
func (p *rollout) machines() int32 {
	var n int32
	for _, s := range p.all() {
		n += s.size()
	}
	return n
}

// scaleNew sets the new set's replicas: up by as much as the surge allows, or down to replicas.
func (p *rollout) scaleNew() {
	n := p.newSet
	switch {
	case n.spec > p.replicas:
		n.spec = p.replicas
	case n.spec < p.replicas:
		room := p.replicas + p.maxSurge - p.machines()
		if room > 0 {
			n.spec += min(room, p.replicas-n.spec)
		}
	}
}

// scaleDownOld lowers old sets' replicas as far as availability allows: first by their
// unavailable Machines (which cost no availability; the set deletes those first), then by
// available ones down to replicas-maxUnavailable available in total.
func (p *rollout) scaleDownOld() {
	var allSpec, oldSpec int32
	for _, s := range p.all() {
		allSpec += s.spec
	}
	for _, s := range p.oldSets {
		oldSpec += s.spec
	}
	if oldSpec == 0 {
		return
	}
	minAvailable := p.replicas - p.maxUnavailable
	newUnavailable := p.newSet.spec - p.newSet.effAvail()
	maxScaledDown := allSpec - minAvailable - newUnavailable
	if maxScaledDown <= 0 {
		return
	}
	var cleaned int32
	for _, s := range p.oldSets {
		if cleaned >= maxScaledDown {
			break
		}
		if bad := s.spec - s.effAvail(); bad > 0 {
			d := min(maxScaledDown-cleaned, bad)
			s.spec -= d
			cleaned += d
		}
	}
	var avail int32
	for _, s := range p.all() {
		avail += s.effAvail()
	}
	if avail <= minAvailable {
		return
	}
	left := min(avail-minAvailable, maxScaledDown-cleaned)
	for _, s := range p.oldSets {
		if left <= 0 {
			break
		}
		d := min(s.spec, left)
		s.spec -= d
		left -= d
	}
}

// complete reports whether every Machine is from the new template and available.
func (p *rollout) complete() bool {
	if p.newSet == nil || p.newSet.spec != p.replicas || p.newSet.count != p.replicas || p.newSet.available < p.replicas {
		return false
	}
	for _, s := range p.oldSets {
		if s.spec > 0 || s.count > 0 {
			return false
		}
	}
	return true
}

// scaling reports whether replicas changed since the active sets were last sized.
func (p *rollout) scaling() bool {
	for _, s := range p.all() {
		if s.spec > 0 && s.ms.Annotations[v1alpha1.DesiredReplicasAnnotation] != itoa(p.replicas) {
			return true
		}
	}
	return false
}

// scale resizes the sets after replicas changed: one active set takes all; a saturated new set
// makes old sets go; otherwise the change is spread in proportion to the sets' sizes, so that a
// scale in mid-rollout neither speeds nor stalls it.
func (p *rollout) scale() {
	var active []*setState
	for _, s := range p.all() {
		if s.spec > 0 {
			active = append(active, s)
		}
	}
	switch {
	case len(active) == 0:
		if latest := p.latest(); latest != nil {
			latest.spec = p.replicas
		}
		return
	case len(active) == 1:
		active[0].spec = p.replicas
		return
	case p.newSet != nil && p.newSet.spec == p.replicas && p.newSet.available >= p.replicas:
		for _, s := range p.oldSets {
			s.spec = 0
		}
		return
	}
	allowed := p.replicas + p.maxSurge
	if p.replicas == 0 {
		allowed = 0
	}
	var current int32
	for _, s := range active {
		current += s.spec
	}
	toAdd := allowed - current
	sort.SliceStable(active, func(i, j int) bool {
		if active[i].spec != active[j].spec {
			return active[i].spec > active[j].spec
		}
		if toAdd > 0 {
			return active[i].revision > active[j].revision
		}
		return active[i].revision < active[j].revision
	})
	var added int32
	for _, s := range active {
		d := p.proportion(s, toAdd, added)
		s.spec += d
		added += d
	}
	if leftover := toAdd - added; leftover != 0 {
		active[0].spec = max(active[0].spec+leftover, 0)
	}
}

// proportion is the share of toAdd that set s gets, from its size when the sets were last sized.
func (p *rollout) proportion(s *setState, toAdd, added int32) int32 {
	if s.spec == 0 || toAdd == 0 {
		return 0
	}
	var frac int32
	if p.replicas == 0 {
		frac = -s.spec
	} else if annotated, ok := atoi(s.ms.Annotations[v1alpha1.MaxReplicasAnnotation]); ok && annotated > 0 {
		frac = int32(math.Round(float64(s.spec)*float64(p.replicas+p.maxSurge)/float64(annotated))) - s.spec
	} else {
		return 0
	}
	allowed := toAdd - added
	if toAdd > 0 {
		return min(frac, allowed)
	}
	return max(frac, allowed)
}

func (p *rollout) latest() *setState {
	if p.newSet != nil {
		return p.newSet
	}
	if len(p.oldSets) == 0 {
		return nil
	}
	return p.oldSets[len(p.oldSets)-1]
}
