package kube

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// waitCRDs waits until the CRDs are Established, so objects of their kinds can be applied.
func (c *Client) waitCRDs(ctx context.Context, crds []*unstructured.Unstructured) error {
	for _, crd := range crds {
		name := crd.GetName()
		err := Wait(ctx, "CustomResourceDefinition "+name+" to be established", time.Minute, func(ctx context.Context) (bool, string, error) {
			got, err := c.Dynamic.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, "", err
			}
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			for _, cond := range conds {
				m, _ := cond.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return true, "", nil
				}
			}
			return false, fmt.Sprintf("conditions %v", conds), nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }
