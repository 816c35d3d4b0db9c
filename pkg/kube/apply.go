package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// FieldManager is slipway's server-side apply field manager.
const FieldManager = "slipway"

// Decode splits a multi-document YAML stream into objects, skipping empty documents.
func Decode(manifests []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufioReader(manifests))
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		if len(obj) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("document %d has no kind or apiVersion", i+1)
		}
		out = append(out, u)
	}
}

// Apply server-side applies objects in order, forcing ownership of fields slipway manages.
// CustomResourceDefinitions are applied first and the REST mapping is refreshed, so a manifest
// may create a CRD and its objects together.
func (c *Client) Apply(ctx context.Context, objs []*unstructured.Unstructured) error {
	return c.ApplyAs(ctx, FieldManager, objs)
}

// ApplyAs is Apply under another field manager. A manager owns exactly the fields it last
// applied, so a partial object (one field of an object slipway does not manage) must go
// through a manager of its own, or applying it would drop every other field slipway owns.
func (c *Client) ApplyAs(ctx context.Context, manager string, objs []*unstructured.Unstructured) error {
	return c.ApplyWith(ctx, objs, ApplyOptions{Manager: manager})
}

// ApplyOptions say how ApplyWith and ApplyObject apply.
type ApplyOptions struct {
	// Manager is the field manager; FieldManager when empty.
	Manager string
	// DryRun has the API server check the object, admission included, and keep nothing.
	DryRun bool
	// Strict has the API server refuse fields it does not know, rather than drop them.
	Strict bool
}

// ObjectError is the failure of one object of ApplyWith, which it names.
type ObjectError struct {
	Object *unstructured.Unstructured
	Err    error
}

func (e *ObjectError) Error() string { return e.Err.Error() }
func (e *ObjectError) Unwrap() error { return e.Err }

// ApplyWith is Apply with opts: CustomResourceDefinitions first, then the other objects in
// order. It stops at the first object that fails, with an *ObjectError.
func (c *Client) ApplyWith(ctx context.Context, objs []*unstructured.Unstructured, opts ApplyOptions) error {
	var crds, rest []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, o)
		} else {
			rest = append(rest, o)
		}
	}
	for _, group := range [][]*unstructured.Unstructured{crds, rest} {
		for _, o := range group {
			if err := c.ApplyObject(ctx, o, opts); err != nil {
				return &ObjectError{Object: o, Err: err}
			}
		}
		if len(group) > 0 && group[0].GetKind() == "CustomResourceDefinition" && !opts.DryRun {
			if err := c.waitCRDs(ctx, group); err != nil {
				return err
			}
			c.Mapper.Reset()
		}
	}
	return nil
}

// ApplyObject server-side applies one object, forcing ownership of the fields it sets. A
// namespaced object without a namespace goes to "default", as kubectl puts it.
func (c *Client) ApplyObject(ctx context.Context, o *unstructured.Unstructured, opts ApplyOptions) error {
	gvk := o.GroupVersionKind()
	m, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		c.Mapper.Reset()
		if m, err = c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			return fmt.Errorf("applying %s %s: %w", gvk.Kind, o.GetName(), err)
		}
	}
	data, err := o.MarshalJSON()
	if err != nil {
		return err
	}
	ri := c.Dynamic.Resource(m.Resource)
	force := true
	patch := metav1.PatchOptions{FieldManager: opts.Manager, Force: &force}
	if patch.FieldManager == "" {
		patch.FieldManager = FieldManager
	}
	if opts.DryRun {
		patch.DryRun = []string{metav1.DryRunAll}
	}
	if opts.Strict {
		patch.FieldValidation = "Strict"
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := o.GetNamespace()
		if ns == "" {
			ns = "default"
		}
		_, err = ri.Namespace(ns).Patch(ctx, o.GetName(), types.ApplyPatchType, data, patch)
	} else {
		_, err = ri.Patch(ctx, o.GetName(), types.ApplyPatchType, data, patch)
	}
	if err != nil {
		return fmt.Errorf("applying %s %s/%s: %w", gvk.Kind, o.GetNamespace(), o.GetName(), err)
	}
	return nil
}
