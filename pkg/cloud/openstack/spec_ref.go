package openstack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Resolver reads the values that a cloudProviderSpec references instead of spelling out. The
// controller backs it with its Kubernetes client (see ClientResolver).
type Resolver interface {
	SecretKey(ctx context.Context, namespace, name, key string) (string, error)
	ConfigMapKey(ctx context.Context, namespace, name, key string) (string, error)
}

// keyRef is {namespace, name, key}.
type keyRef struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Key       string `json:"key"`
}

// valueRef is the object form of a string field.
type valueRef struct {
	SecretKeyRef    *keyRef `json:"secretKeyRef"`
	ConfigMapKeyRef *keyRef `json:"configMapKeyRef"`
}

// decodeString reads a JSON string, or resolves a {secretKeyRef|configMapKeyRef} object.
func decodeString(ctx context.Context, raw json.RawMessage, r Resolver, fp *field.Path) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var ref valueRef
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ref); err != nil {
		return "", field.Invalid(fp, string(raw), "must be a string or {secretKeyRef|configMapKeyRef: {namespace, name, key}}")
	}
	kr, kind := ref.SecretKeyRef, "secretKeyRef"
	switch {
	case ref.SecretKeyRef != nil && ref.ConfigMapKeyRef != nil:
		return "", field.Invalid(fp, string(raw), "give either secretKeyRef or configMapKeyRef, not both")
	case ref.ConfigMapKeyRef != nil:
		kr, kind = ref.ConfigMapKeyRef, "configMapKeyRef"
	case kr == nil:
		return "", field.Invalid(fp, string(raw), "must be a string or {secretKeyRef|configMapKeyRef: {namespace, name, key}}")
	}
	if kr.Namespace == "" || kr.Name == "" || kr.Key == "" {
		return "", field.Required(fp.Child(kind), "namespace, name and key are all required")
	}
	if r == nil {
		return "", field.Invalid(fp.Child(kind), kr.Name, "references cannot be resolved here")
	}
	var v string
	var err error
	if kind == "secretKeyRef" {
		v, err = r.SecretKey(ctx, kr.Namespace, kr.Name, kr.Key)
	} else {
		v, err = r.ConfigMapKey(ctx, kr.Namespace, kr.Name, kr.Key)
	}
	if err != nil {
		return "", fmt.Errorf("reading %s %s/%s key %s for %s: %w", kind, kr.Namespace, kr.Name, kr.Key, fp, err)
	}
	return v, nil
}

// ClientResolver resolves references with a controller-runtime client.
type ClientResolver struct {
	Reader client.Reader
}

// SecretKey returns one key of a Secret.
func (c ClientResolver) SecretKey(ctx context.Context, namespace, name, key string) (string, error) {
	var s corev1.Secret
	if err := c.Reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, &s); err != nil {
		return "", err
	}
	v, ok := s.Data[key]
	if !ok {
		return "", fmt.Errorf("secret %s/%s has no key %q", namespace, name, key)
	}
	return string(v), nil
}

// ConfigMapKey returns one key of a ConfigMap.
func (c ClientResolver) ConfigMapKey(ctx context.Context, namespace, name, key string) (string, error) {
	var cm corev1.ConfigMap
	if err := c.Reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, &cm); err != nil {
		return "", err
	}
	v, ok := cm.Data[key]
	if !ok {
		return "", fmt.Errorf("configmap %s/%s has no key %q", namespace, name, key)
	}
	return v, nil
}
