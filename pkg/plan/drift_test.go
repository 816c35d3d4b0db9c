package plan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// md is a MachineDeployment as JSON, as apply renders it (want) or as the API server holds it
// (live: defaults and status added); edit changes the decoded object first.
func md(t *testing.T, live bool, edit func(map[string]any)) json.RawMessage {
	t.Helper()
	obj := map[string]any{
		"apiVersion": "cluster.k8s.io/v1alpha1", "kind": "MachineDeployment",
		"metadata": map[string]any{"name": "pool-a", "namespace": "kube-system",
			"annotations": map[string]any{"cluster.k8s.io/cluster-api-autoscaler-node-group-min-size": "1"}},
		"spec": map[string]any{
			"replicas": 2,
			"selector": map[string]any{"matchLabels": map[string]any{"workerset": "pool-a"}},
			"strategy": map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": 1, "maxUnavailable": 0}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"workerset": "pool-a"}, "creationTimestamp": nil},
				"spec": map[string]any{
					"metadata":     map[string]any{"labels": map[string]any{"env": "prod"}},
					"taints":       []any{map[string]any{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}},
					"providerSpec": map[string]any{"value": map[string]any{"cloudProvider": "openstack", "cloudProviderSpec": map[string]any{"flavor": "m1.small", "image": "debian-12"}}},
					"versions":     map[string]any{"kubelet": "1.36.3"},
				},
			},
		},
	}
	if live {
		spec := obj["spec"].(map[string]any)
		spec["progressDeadlineSeconds"], spec["revisionHistoryLimit"], spec["minReadySeconds"] = 600, 1, 0
		obj["metadata"].(map[string]any)["uid"] = "u-1"
		obj["status"] = map[string]any{"replicas": 2, "readyReplicas": 2}
	}
	if edit != nil {
		edit(obj)
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func set(path string, v any) func(map[string]any) {
	return func(obj map[string]any) {
		keys := strings.Split(path, "/")
		m := obj
		for _, k := range keys[:len(keys)-1] {
			m = m[k].(map[string]any)
		}
		if v == nil {
			delete(m, keys[len(keys)-1])
		} else {
			m[keys[len(keys)-1]] = v
		}
	}
}

func TestPoolDrift(t *testing.T) {
	applied := map[string]string{"cni": "c1", "machine-controller": "m1", "machine-deployments": "d1"}
	changed := map[string]string{"cni": "c1", "machine-controller": "m1", "machine-deployments": "d2"}
	tests := []struct {
		name       string
		want, live json.RawMessage
		addons     map[string]string
		autoscaled map[string]int32
		liveCount  int32
		steps      string
		changes    []string // PoolChange.String() of each
	}{
		{
			name: "live as rendered, with the API server's defaults and status: no drift",
			want: md(t, false, nil), live: md(t, true, nil), addons: applied, liveCount: 2,
		},
		{
			name: "kubectl scale on a pool the manifest sizes: scaled back",
			want: md(t, false, nil), live: md(t, true, set("spec/replicas", 3)), addons: applied, liveCount: 3,
			steps:   "machine-deployments; wait-pools",
			changes: []string{"pool-a: replicas 3 → 2 (scale)"},
		},
		{
			name: "kubectl edit of the flavor: rolled back, every machine replaced",
			want: md(t, false, nil), live: md(t, true, set("spec/template/spec/providerSpec/value/cloudProviderSpec/flavor", "m1.large")), addons: applied, liveCount: 2,
			steps:   "machine-deployments; wait-pools",
			changes: []string{"pool-a: flavor m1.large → m1.small (rolling update of 2 machines)"},
		},
		{
			name: "a label and a taint changed in the manifest: in place, named with the hash's reason",
			want: md(t, false, func(o map[string]any) {
				set("spec/template/spec/metadata/labels/env", "staging")(o)
				set("spec/template/spec/taints", []any{})(o)
			}),
			live: md(t, true, nil), addons: changed, liveCount: 1,
			steps: "machine-deployments; wait-pools",
			changes: []string{
				"pool-a: labels[env] prod → staging (in place, no machine replaced)",
				`pool-a: taints [{"effect":"NoSchedule","key":"dedicated","value":"gpu"}] → [] (in place, no machine replaced)`,
			},
		},
		{
			name: "the image changed in the manifest: a rolling update of the live count",
			want: md(t, false, set("spec/template/spec/providerSpec/value/cloudProviderSpec/image", "debian-13")), live: md(t, true, nil),
			addons: changed, liveCount: 1,
			steps:   "machine-deployments; wait-pools",
			changes: []string{"pool-a: image debian-12 → debian-13 (rolling update of 1 machine)"},
		},
		{
			name: "the strategy and a bound changed by hand: in place",
			want: md(t, false, nil),
			live: md(t, true, func(o map[string]any) {
				set("spec/strategy/rollingUpdate/maxSurge", 3)(o)
				delete(o["metadata"].(map[string]any), "annotations")
			}),
			addons: applied, liveCount: 2,
			steps: "machine-deployments; wait-pools",
			changes: []string{
				"pool-a: MachineDeployment annotations[cluster.k8s.io/cluster-api-autoscaler-node-group-min-size] (none) → 1 (in place, no machine replaced)",
				"pool-a: strategy.rollingUpdate.maxSurge 3 → 1 (in place, no machine replaced)",
			},
		},
		{
			name: "the autoscaler scaled a pool with bounds: apply sends no replicas and the plan says why",
			want: md(t, false, set("spec/replicas", nil)), live: md(t, true, set("spec/replicas", 3)), addons: applied,
			autoscaled: map[string]int32{"pool-a": 2}, liveCount: 3,
			changes: []string{"pool-a: replicas 3, the manifest says 2 (kept: the cluster-autoscaler sizes this pool, the manifest's replicas is its size at creation)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := converged(hostsHA(), "1.36.3", applied)
			o.Cluster.Pools = map[string]PoolState{"pool-a": {Replicas: tt.liveCount, Ready: tt.liveCount, Settled: true, Object: tt.live}}
			d := Desired{Version: "1.36.3", Hosts: hostsHA(), Addons: tt.addons, Pools: []string{"pool-a"},
				PoolObjects: map[string]json.RawMessage{"pool-a": tt.want}, Autoscaled: tt.autoscaled}
			p, err := Build(d, o)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(p); got != tt.steps {
				t.Fatalf("steps:\n got: %s\nwant: %s", got, tt.steps)
			}
			var got []string
			for _, c := range p.Pools {
				got = append(got, c.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.changes, "\n") {
				t.Fatalf("changes:\n got: %q\nwant: %q", got, tt.changes)
			}
			var drift []string
			for _, c := range p.Pools {
				if c.Action != PoolKept {
					drift = append(drift, c.String())
				}
			}
			if len(drift) > 0 && !strings.HasSuffix(p.Steps[0].Reason, strings.Join(drift, "; ")) {
				t.Errorf("the step's reason %q does not name the drift %q", p.Steps[0].Reason, drift)
			}
			if tt.addons["machine-deployments"] != applied["machine-deployments"] && !strings.HasPrefix(p.Steps[0].Reason, addonReason("d1")) {
				t.Errorf("the step's reason %q lost the hash's reason", p.Steps[0].Reason)
			}
			var out bytes.Buffer
			Print(&out, "demo", "1.36.3", p)
			for _, c := range tt.changes {
				if !strings.Contains(out.String(), "  "+c+"\n") {
					t.Errorf("the printed plan does not list %q:\n%s", c, out.String())
				}
			}
			raw, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			if len(tt.changes) > 0 && !bytes.Contains(raw, []byte(`"poolChanges":[{"pool":"pool-a"`)) {
				t.Errorf("-o json carries no pool changes: %s", raw)
			}
		})
	}
}

func TestPoolDriftRefusesGarbage(t *testing.T) {
	o := converged(hostsHA(), "1.36.3", map[string]string{"machine-deployments": "d1"})
	o.Cluster.Pools = map[string]PoolState{"pool-a": {Object: json.RawMessage(`{"spec":`)}}
	d := Desired{Version: "1.36.3", Hosts: hostsHA(), Addons: map[string]string{"machine-deployments": "d1"}, Pools: []string{"pool-a"},
		PoolObjects: map[string]json.RawMessage{"pool-a": md(t, false, nil)}}
	if _, err := Build(d, o); err == nil || !strings.Contains(err.Error(), "pool pool-a: the live MachineDeployment") {
		t.Fatalf("err = %v, want one naming the pool and the live object", err)
	}
}
