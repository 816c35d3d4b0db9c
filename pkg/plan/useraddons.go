package plan

import (
	"fmt"
	"sort"
	"strings"
)

// AddonChanges are what the addons step does to the user addon set: the objects of addons.path
// that the cluster lacks (Add) or holds as they were rendered before (Change), and the
// objects with the set's label that the folder no longer renders (Prune).
type AddonChanges struct {
	Add    []AddonObject `json:"add,omitempty"`
	Change []AddonObject `json:"change,omitempty"`
	Prune  []AddonObject `json:"prune,omitempty"`
}

// userAddonChanges compares the objects addons.path renders with those the cluster holds with
// the set's label, by group, kind, namespace and name: a rendered object without a namespace is
// in "default" when its kind is namespaced, as the API server puts it there. A changed hash is a
// change. Without addons.path nothing is compared (and nothing pruned; see userAddons). The
// result is nil when there is nothing to do.
func userAddonChanges(d Desired, o Observed) *AddonChanges {
	if !d.AddonsPath {
		return nil
	}
	live := map[string]AddonObject{}
	for _, obj := range o.Cluster.UserAddons {
		live[addonKey(obj, o.Cluster.AddonNamespaced)] = obj
	}
	ch := &AddonChanges{}
	wanted := map[string]bool{}
	for _, obj := range d.UserAddons {
		obj.Namespace = addonNamespace(obj, o.Cluster.AddonNamespaced)
		k := addonKey(obj, o.Cluster.AddonNamespaced)
		wanted[k] = true
		have, ok := live[k]
		switch {
		case !ok:
			ch.Add = append(ch.Add, obj)
		case have.Hash != obj.Hash:
			ch.Change = append(ch.Change, obj)
		}
	}
	for k, obj := range live {
		if !wanted[k] {
			ch.Prune = append(ch.Prune, obj)
		}
	}
	sort.Slice(ch.Prune, func(i, j int) bool {
		a, b := ch.Prune[i], ch.Prune[j]
		return a.Kind+"/"+a.Namespace+"/"+a.Name < b.Kind+"/"+b.Namespace+"/"+b.Name
	})
	if len(ch.Add)+len(ch.Change)+len(ch.Prune) == 0 {
		return nil
	}
	return ch
}

// addonGroupKind is "<group>/<Kind>" of an object, the key of ClusterState.AddonNamespaced.
func addonGroupKind(obj AddonObject) string {
	group, _, ok := strings.Cut(obj.APIVersion, "/")
	if !ok {
		group = "" // the core group: apiVersion v1
	}
	return group + "/" + obj.Kind
}

// addonNamespace is where the API server keeps obj: its namespace, "default" for a namespaced
// kind without one, none for a kind that is not namespaced; as written for a kind the API does
// not serve yet.
func addonNamespace(obj AddonObject, namespaced map[string]bool) string {
	ns, known := namespaced[addonGroupKind(obj)]
	switch {
	case !known:
		return obj.Namespace
	case !ns:
		return ""
	case obj.Namespace == "":
		return "default"
	}
	return obj.Namespace
}

func addonKey(obj AddonObject, namespaced map[string]bool) string {
	return addonGroupKind(obj) + "/" + addonNamespace(obj, namespaced) + "/" + obj.Name
}

// addonsDryRun has the API server check the objects of addons.path, with a server-side dry run,
// before any other step changes anything, when the addons step will add or change some. A cluster
// that does not exist yet has no API to ask: the addons step checks them all before it applies
// any instead.
func (b *builder) addonsDryRun() {
	ch := b.addonChanges
	if ch == nil || !b.o.Cluster.Exists || len(ch.Add)+len(ch.Change) == 0 {
		return
	}
	b.add(StepAddonsDryRun, "", fmt.Sprintf("%d objects of addons.path to add or change: the API server checks the folder's objects (server-side dry run) before anything changes",
		len(ch.Add)+len(ch.Change)), false)
}

// userAddons applies the objects of addons.path that are new or changed and prunes the objects
// of the set that the folder no longer holds, after slipway's own addons. Without addons.path,
// objects that carry the set's label stay where they are, with a warning: removing the field is
// not a request to delete what it applied.
func (b *builder) userAddons() {
	ch := b.addonChanges
	if ch == nil {
		if !b.d.AddonsPath && len(b.o.Cluster.UserAddons) > 0 {
			b.plan.Warnings = append(b.plan.Warnings, fmt.Sprintf("addons.path is not set, and the cluster holds %d objects that slipway applied from it: "+
				"they stay; set addons.path to an empty folder to prune them", len(b.o.Cluster.UserAddons)))
		}
		return
	}
	var r []string
	for _, part := range []struct {
		verb string
		n    int
	}{{"add", len(ch.Add)}, {"change", len(ch.Change)}, {"prune", len(ch.Prune)}} {
		if part.n > 0 {
			r = append(r, fmt.Sprintf("%d to %s", part.n, part.verb))
		}
	}
	b.add(StepAddons, "", "addons.path: "+strings.Join(r, ", "), false)
	b.plan.Addons = ch
}
