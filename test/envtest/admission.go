package envtest

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

// waitAdmission waits until the API server applies the Machine webhook (on) or no longer does
// (off). It reads its webhook configurations through an informer, so a configuration just
// created or deleted takes a moment to count: a dry-run create of a Machine that admission
// refuses (its providerSpec names no cloud) tells which way it is.
func (e *Env) waitAdmission(t testing.TB, on bool) {
	t.Helper()
	ctx := context.Background()
	raw := []byte(`{"operatingSystem":"ubuntu"}`)
	Eventually(t, 30*time.Second, map[bool]string{true: "admission back on", false: "admission off"}[on], func() (bool, string) {
		m := &v1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{GenerateName: "admission-probe-", Namespace: metav1.NamespaceDefault},
			Spec: v1alpha1.MachineSpec{ProviderSpec: v1alpha1.ProviderSpec{Value: &runtime.RawExtension{Raw: raw}},
				Versions: v1alpha1.MachineVersionInfo{Kubelet: "1.36.3"}}}
		err := e.Client.Create(ctx, m, client.DryRunAll)
		switch {
		case on && apierrors.IsInvalid(err), !on && err == nil:
			return true, ""
		case err == nil:
			return false, "a Machine that admission refuses was accepted"
		}
		return false, err.Error()
	})
}
