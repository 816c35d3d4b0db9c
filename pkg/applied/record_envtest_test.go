package applied_test

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/slipway-dev/slipway/pkg/applied"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/test/envtest"
)

// TestRecordConcurrently records from many goroutines at once, as the phases of several hosts
// do (each control plane's image import), first into a cluster without the ConfigMap: every
// record is kept and none fails on a conflict. A later record of the same name replaces its hash
// and leaves the others.
func TestRecordConcurrently(t *testing.T) {
	env := envtest.Get(t)
	kc, err := kube.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_ = kc.Kube.CoreV1().ConfigMaps("kube-system").Delete(ctx, applied.StateConfigMap, metav1.DeleteOptions{})
	const n = 12
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = applied.Record(ctx, kc, fmt.Sprintf("image-archive.cp-%d", i), fmt.Sprintf("hash-%d", i))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("record %d: %v", i, err)
		}
	}
	if err := applied.Record(ctx, kc, "image-archive.cp-0", "hash-new"); err != nil {
		t.Fatal(err)
	}
	got, err := applied.Addons(ctx, kc)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		want := fmt.Sprintf("hash-%d", i)
		if i == 0 {
			want = "hash-new"
		}
		if k := fmt.Sprintf("image-archive.cp-%d", i); got[k] != want {
			t.Errorf("%s = %q, want %q (all: %v)", k, got[k], want, got)
		}
	}
}

// TestAddonKinds records the kinds of the user addon set in a real API server's slipway-state
// ConfigMap, deduplicated and sorted, and reads them back; the record is not an addon hash, so
// Addons leaves it out, and the other records stay.
func TestAddonKinds(t *testing.T) {
	env := envtest.Get(t)
	kc, err := kube.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_ = kc.Kube.CoreV1().ConfigMaps("kube-system").Delete(ctx, applied.StateConfigMap, metav1.DeleteOptions{})
	if kinds, err := applied.AddonKinds(ctx, kc); err != nil || len(kinds) != 0 {
		t.Fatalf("without a record: %v, %v", kinds, err)
	}
	if err := applied.Record(ctx, kc, "cni", "c1"); err != nil {
		t.Fatal(err)
	}
	deploy := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	cm := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	if err := applied.RecordAddonKinds(ctx, kc, []schema.GroupVersionKind{deploy, cm, deploy}); err != nil {
		t.Fatal(err)
	}
	kinds, err := applied.AddonKinds(ctx, kc)
	if err != nil || !reflect.DeepEqual(kinds, []schema.GroupVersionKind{deploy, cm}) {
		t.Errorf("kinds %v (%v), want Deployment and ConfigMap, sorted by apiVersion", kinds, err)
	}
	if got, err := applied.Addons(ctx, kc); err != nil || !reflect.DeepEqual(got, map[string]string{"cni": "c1"}) {
		t.Errorf("Addons = %v (%v), want the hashes only", got, err)
	}
	if got := applied.ParseAddonKinds("apps/v1 Deployment\nnot a kind line\n/v1/x Y\n"); !reflect.DeepEqual(got, []schema.GroupVersionKind{deploy}) {
		t.Errorf("ParseAddonKinds = %v", got)
	}
}
