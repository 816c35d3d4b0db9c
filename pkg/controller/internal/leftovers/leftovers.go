// Package leftovers keeps the record of servers that forced deletions left behind (a ConfigMap),
// which the Machine controller writes and the orphan sweep releases.
package leftovers

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

// +kubebuilder:rbac:groups="",namespace=kube-system,resources=configmaps,verbs=create
// +kubebuilder:rbac:groups="",namespace=kube-system,resources=configmaps,resourceNames=machine-controller-leftovers,verbs=get;update

// configMap records, per Machine UID, the Machines whose forced deletion left a server
// behind. The record keeps the annotations and provider status through which the provider
// remembers what it allocated, so that the orphan sweep can release all of it, not just the server.
const configMap = "machine-controller-leftovers"

// Record adds m to the leftover record.
func Record(ctx context.Context, c client.Client, r client.Reader, ns string, m *v1alpha1.Machine) error {
	keep := v1alpha1.Machine{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Machine"},
		ObjectMeta: metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID, Annotations: m.Annotations, Labels: m.Labels},
		Spec:       m.Spec,
		Status:     v1alpha1.MachineStatus{ProviderStatus: m.Status.ProviderStatus, Addresses: m.Status.Addresses},
	}
	raw, err := json.Marshal(keep)
	if err != nil {
		return fmt.Errorf("encoding leftover record of machine %s: %w", m.Name, err)
	}
	return update(ctx, c, r, ns, func(data map[string]string) { data[string(m.UID)] = string(raw) })
}

// Forget removes the record of the Machine UID.
func Forget(ctx context.Context, c client.Client, r client.Reader, ns, uid string) error {
	return update(ctx, c, r, ns, func(data map[string]string) { delete(data, uid) })
}

// update reads through r (uncached: ConfigMaps are never cached) and writes through c.
func update(ctx context.Context, c client.Client, r client.Reader, ns string, mutate func(map[string]string)) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm := &corev1.ConfigMap{}
		err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: configMap}, cm)
		if apierrors.IsNotFound(err) {
			cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: configMap}, Data: map[string]string{}}
			mutate(cm.Data)
			return c.Create(ctx, cm)
		}
		if err != nil {
			return err
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		mutate(cm.Data)
		return c.Update(ctx, cm)
	})
	if err != nil {
		return fmt.Errorf("updating %s/%s: %w", ns, configMap, err)
	}
	return nil
}

// Load returns the recorded Machines by UID.
func Load(ctx context.Context, c client.Reader, ns string) (map[string]*v1alpha1.Machine, error) {
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: configMap}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading %s/%s: %w", ns, configMap, err)
	}
	out := map[string]*v1alpha1.Machine{}
	for uid, raw := range cm.Data {
		m := &v1alpha1.Machine{}
		if err := json.Unmarshal([]byte(raw), m); err != nil {
			return nil, fmt.Errorf("decoding leftover record %s: %w", uid, err)
		}
		out[uid] = m
	}
	return out, nil
}
