package plan

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
)

// Actions of a PoolChange: what applying the manifest does about a difference.
const (
	// PoolScale: the manifest owns replicas, and apply sets the live count back to it.
	PoolScale = "scale"
	// PoolRoll: the difference is in the template, so every Machine of the pool is replaced.
	PoolRoll = "rolling update"
	// PoolInPlace: the difference is in the Machines' annotations or the Nodes' labels,
	// annotations or taints, which the machine-controller changes on the existing Machines and
	// Nodes, or outside the template (the strategy, the autoscaler's bounds): no Machine is
	// replaced.
	PoolInPlace = "in place"
	// PoolKept: apply leaves the difference as it is: the cluster-autoscaler sizes the pool, and
	// the manifest's replicas is only its size at creation.
	PoolKept = "kept"
)

// PoolChange is one difference between a worker pool's live MachineDeployment and the one the
// manifest renders, and what apply does about it.
type PoolChange struct {
	Pool string `json:"pool"`
	// Field names what differs, e.g. replicas, flavor, labels[env], strategy.rollingUpdate.maxSurge.
	Field string `json:"field"`
	// Live and Wanted are the two values, as JSON; Live is "" when the live object has none.
	Live   string `json:"live"`
	Wanted string `json:"wanted"`
	Action string `json:"action"`
	// Machines is how many Machines a rolling update replaces (the live replicas).
	Machines int32 `json:"machines,omitempty"`
}

func (c PoolChange) String() string {
	live := c.Live
	if live == "" {
		live = "(none)"
	}
	what := c.Action
	switch c.Action {
	case PoolRoll:
		what = fmt.Sprintf("rolling update of %d machines", c.Machines)
		if c.Machines == 1 {
			what = "rolling update of 1 machine"
		}
	case PoolInPlace:
		what = "in place, no machine replaced"
	case PoolKept:
		return fmt.Sprintf("%s: %s %s, the manifest says %s (kept: the cluster-autoscaler sizes this pool, the manifest's replicas is its size at creation)", c.Pool, c.Field, live, c.Wanted)
	}
	return fmt.Sprintf("%s: %s %s → %s (%s)", c.Pool, c.Field, live, c.Wanted, what)
}

// poolChanges compares every pool of the manifest that exists with its live MachineDeployment,
// field by field: each value the manifest sets and the live object does not have (a hand edit, or
// a change in the manifest). Values only the live object has (defaults, fields of other owners)
// are not drift. The changes come sorted by pool, then by field.
func poolChanges(d Desired, o Observed) ([]PoolChange, error) {
	var out []PoolChange
	for _, name := range d.Pools {
		live, ok := o.Cluster.Pools[name]
		want, rendered := d.PoolObjects[name]
		if !ok || !rendered || len(live.Object) == 0 {
			continue
		}
		var w, l map[string]any
		if err := json.Unmarshal(want, &w); err != nil {
			return nil, fmt.Errorf("pool %s: the rendered MachineDeployment: %w", name, err)
		}
		if err := json.Unmarshal(live.Object, &l); err != nil {
			return nil, fmt.Errorf("pool %s: the live MachineDeployment: %w", name, err)
		}
		var diffs []diff
		for _, part := range [][]string{{"spec"}, {"metadata", "annotations"}} {
			wv, wok := lookup(w, part)
			if !wok {
				continue
			}
			lv, _ := lookup(l, part)
			diffs = append(diffs, compare(part, wv, lv)...)
		}
		for _, df := range diffs {
			c := PoolChange{Pool: name, Field: fieldName(df.path), Live: df.live, Wanted: df.want}
			switch {
			case slices.Equal(df.path, []string{"spec", "replicas"}):
				c.Action = PoolScale
			case inPlace(df.path):
				c.Action = PoolInPlace
			case len(df.path) > 1 && df.path[1] == "template":
				c.Action, c.Machines = PoolRoll, live.Replicas
			default:
				c.Action = PoolInPlace
			}
			out = append(out, c)
		}
		if want, ok := d.Autoscaled[name]; ok && want != live.Replicas {
			out = append(out, PoolChange{Pool: name, Field: "replicas", Live: fmt.Sprint(live.Replicas), Wanted: fmt.Sprint(want), Action: PoolKept})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Pool != out[j].Pool {
			return out[i].Pool < out[j].Pool
		}
		return out[i].Field < out[j].Field
	})
	return out, nil
}

// inPlace reports whether a path of a MachineDeployment's template changes without replacing a
// Machine: the Machines' annotations and the Nodes' labels, annotations and taints (see the
// machine-controller's machineutil.Rolling).
func inPlace(path []string) bool {
	for _, p := range [][]string{
		{"spec", "template", "metadata", "annotations"},
		{"spec", "template", "spec", "metadata"},
		{"spec", "template", "spec", "taints"},
	} {
		if hasPrefix(path, p) {
			return true
		}
	}
	return false
}

type diff struct {
	path       []string
	live, want string
}

// compare returns where want, a value the manifest renders, differs from live. Objects are
// compared key by key (only the keys want has); lists and scalars as whole values, as
// server-side apply replaces them. A null or empty value in want sets nothing.
func compare(path []string, want, live any) []diff {
	if isEmpty(want) {
		return nil
	}
	if wm, ok := want.(map[string]any); ok {
		lm, _ := live.(map[string]any)
		var out []diff
		for _, k := range slices.Sorted(maps.Keys(wm)) {
			out = append(out, compare(append(slices.Clip(path), k), wm[k], lm[k])...)
		}
		return out
	}
	if reflect.DeepEqual(want, live) {
		return nil
	}
	return []diff{{path: path, live: show(live), want: show(want)}}
}

func isEmpty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(v) == 0
	}
	return false
}

func lookup(m map[string]any, path []string) (any, bool) {
	var v any = m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = mm[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// hasPrefix reports whether path starts with prefix.
func hasPrefix(path, prefix []string) bool {
	return len(path) >= len(prefix) && slices.Equal(path[:len(prefix)], prefix)
}

// show renders a value as compact JSON, a string without its quotes, cut to 80 characters.
func show(v any) string {
	if v == nil {
		return ""
	}
	var s string
	if str, ok := v.(string); ok {
		s = str
	} else {
		raw, _ := json.Marshal(v) // decoded from JSON, so it encodes again
		s = string(raw)
	}
	if r := []rune(s); len(r) > 80 {
		s = string(r[:77]) + "..."
	}
	return s
}

// fieldNames name the paths of a MachineDeployment as the manifest's worker pool says them: the
// cloud's settings by their own name (flavor, image), the Nodes' labels, annotations and taints
// and the Machines' annotations by key, the kubelet. The first prefix that matches wins.
var fieldNames = []struct {
	prefix []string
	name   string
	keyed  bool // the next element is a map key: name[key]
}{
	{[]string{"spec", "template", "spec", "providerSpec", "value", "cloudProviderSpec"}, "", false},
	{[]string{"spec", "template", "spec", "providerSpec", "value"}, "", false},
	{[]string{"spec", "template", "spec", "metadata", "labels"}, "labels", true},
	{[]string{"spec", "template", "spec", "metadata", "annotations"}, "annotations", true},
	{[]string{"spec", "template", "metadata", "annotations"}, "machineObjectAnnotations", true},
	{[]string{"spec", "template", "spec", "versions", "kubelet"}, "kubelet", false},
	{[]string{"spec", "template", "spec", "taints"}, "taints", false},
	{[]string{"metadata", "annotations"}, "MachineDeployment annotations", true},
	{[]string{"spec"}, "", false},
}

// fieldName names path for a plan; anything without a name is its path under spec.
func fieldName(path []string) string {
	for _, f := range fieldNames {
		if !hasPrefix(path, f.prefix) {
			continue
		}
		rest := path[len(f.prefix):]
		switch {
		case f.keyed && len(rest) > 0:
			return f.name + "[" + strings.Join(rest, ".") + "]"
		case len(rest) == 0:
			return f.name
		case f.name == "":
			return strings.Join(rest, ".")
		default:
			return f.name + "." + strings.Join(rest, ".")
		}
	}
	return strings.Join(path, ".")
}
