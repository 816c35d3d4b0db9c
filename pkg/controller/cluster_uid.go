package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// +kubebuilder:rbac:groups="",resources=namespaces,resourceNames=kube-system,verbs=get

// ClusterUID returns the UID of the kube-system namespace, which identifies the cluster to its
// cloud provider: servers are marked with it, and the orphan sweep deletes only servers that
// carry it. The namespace exists from the cluster's start and cannot be deleted, so the UID
// never changes while the cluster lives, and no two clusters share it (their names may well be
// the same). Tools built on kubeadm commonly use it as the cluster's ID for the same reasons.
func ClusterUID(ctx context.Context, r client.Reader) (string, error) {
	ns := &corev1.Namespace{}
	if err := r.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, ns); err != nil {
		return "", fmt.Errorf("reading the kube-system namespace, whose UID identifies the cluster: %w", err)
	}
	if ns.UID == "" {
		return "", fmt.Errorf("the kube-system namespace has no UID")
	}
	return string(ns.UID), nil
}
