package openstack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/cloud"
)

// Resolver reads the values that a cloudProviderSpec references instead of spelling out. The
// controller backs it with its Kubernetes client (see ClientResolver). The namespace it is
// given is always the Machine's own.
type Resolver interface {
	SecretKey(ctx context.Context, namespace, name, key string) (string, error)
	ConfigMapKey(ctx context.Context, namespace, name, key string) (string, error)
}

// keyRef is {namespace, name, key}; namespace may be left out and must otherwise be the Machine's.
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

// refScope is where references of one Machine may point: the Machine's namespace, read through
// resolver (nil when references cannot be read, as in admission).
type refScope struct {
	namespace string
	resolver  Resolver
}

// parseRef decodes the object form of a string field and checks it without reading it: only
// credential fields (secret) may name a Secret, and only in the Machine's namespace. A Secret
// value would otherwise come back in an error message about, say, an unknown flavor.
func parseRef(raw json.RawMessage, namespace string, secret bool, fp *field.Path) (kind string, ref *keyRef, err *field.Error) {
	var r valueRef
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if dec.Decode(&r) != nil {
		return "", nil, field.Invalid(fp, string(raw), "must be a string or {secretKeyRef|configMapKeyRef: {name, key}}")
	}
	ref, kind = r.SecretKeyRef, "secretKeyRef"
	switch {
	case r.SecretKeyRef != nil && r.ConfigMapKeyRef != nil:
		return "", nil, field.Invalid(fp, string(raw), "give either secretKeyRef or configMapKeyRef, not both")
	case r.ConfigMapKeyRef != nil:
		ref, kind = r.ConfigMapKeyRef, "configMapKeyRef"
	case ref == nil:
		return "", nil, field.Invalid(fp, string(raw), "must be a string or {secretKeyRef|configMapKeyRef: {name, key}}")
	case !secret:
		return "", nil, field.Forbidden(fp.Child(kind), "only credential fields (username, password, tokenId, "+
			"applicationCredentialID, applicationCredentialSecret) may come from a Secret; use configMapKeyRef or a value")
	}
	if ref.Name == "" || ref.Key == "" {
		return "", nil, field.Required(fp.Child(kind), "name and key are both required")
	}
	if ref.Namespace != "" && ref.Namespace != namespace {
		return "", nil, field.Forbidden(fp.Child(kind, "namespace"), fmt.Sprintf(
			"references resolve only in the Machine's own namespace %q", namespace))
	}
	return kind, ref, nil
}

// decodeString reads a JSON string, or resolves a {secretKeyRef|configMapKeyRef} object.
func decodeString(ctx context.Context, raw json.RawMessage, sc refScope, secret bool, fp *field.Path) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	kind, kr, ferr := parseRef(raw, sc.namespace, secret, fp)
	if ferr != nil {
		return "", ferr
	}
	if sc.resolver == nil {
		return "", field.Invalid(fp.Child(kind), kr.Name, "references cannot be resolved here")
	}
	var v string
	var err error
	if kind == "secretKeyRef" {
		v, err = sc.resolver.SecretKey(ctx, sc.namespace, kr.Name, kr.Key)
	} else {
		v, err = sc.resolver.ConfigMapKey(ctx, sc.namespace, kr.Name, kr.Key)
	}
	if err != nil {
		return "", fmt.Errorf("reading %s %s/%s key %s for %s: %w", kind, sc.namespace, kr.Name, kr.Key, fp, err)
	}
	return v, nil
}

// ClientResolver resolves references with a controller-runtime client. It reads only objects
// labelled cloud.ReferenceLabel=true, and never puts a value in an error.
type ClientResolver struct {
	Reader client.Reader
}

// SecretKey returns one key of a labelled Secret.
func (c ClientResolver) SecretKey(ctx context.Context, namespace, name, key string) (string, error) {
	var s corev1.Secret
	if err := c.get(ctx, namespace, name, &s); err != nil {
		return "", err
	}
	v, ok := s.Data[key]
	if !ok {
		return "", fmt.Errorf("secret %s/%s has no key %q", namespace, name, key)
	}
	return string(v), nil
}

// ConfigMapKey returns one key of a labelled ConfigMap.
func (c ClientResolver) ConfigMapKey(ctx context.Context, namespace, name, key string) (string, error) {
	var cm corev1.ConfigMap
	if err := c.get(ctx, namespace, name, &cm); err != nil {
		return "", err
	}
	v, ok := cm.Data[key]
	if !ok {
		return "", fmt.Errorf("configmap %s/%s has no key %q", namespace, name, key)
	}
	return v, nil
}

func (c ClientResolver) get(ctx context.Context, namespace, name string, obj client.Object) error {
	if err := c.Reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, obj); err != nil {
		if apierrors.IsForbidden(err) {
			return fmt.Errorf("the machine-controller may not read %s/%s: grant its service account get on it with a Role "+
				"and RoleBinding in %s: %w", namespace, name, namespace, err)
		}
		return err
	}
	if obj.GetLabels()[cloud.ReferenceLabel] != "true" {
		return fmt.Errorf("%s/%s is not labelled %s=true, which it must be before Machines may reference it",
			namespace, name, cloud.ReferenceLabel)
	}
	return nil
}
