package main

import (
	"net/http"
	"net/url"
	"testing"
)

func TestClassify(t *testing.T) {
	for _, c := range []struct{ method, url, verb, resource string }{
		{"GET", "/api/v1/namespaces/kube-system/secrets/bootstrap-token-abc123", "get", "secrets"},
		{"GET", "/apis/cluster.k8s.io/v1alpha1/machines?limit=500", "list", "machines"},
		{"GET", "/apis/cluster.k8s.io/v1alpha1/namespaces/ns/machines?watch=true", "watch", "machines"},
		{"PATCH", "/apis/cluster.k8s.io/v1alpha1/namespaces/ns/machines/m-1/status", "patch", "machines/status"},
		{"POST", "/api/v1/namespaces/ns/pods/p/eviction", "create", "pods/eviction"},
		{"PUT", "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l", "update", "leases"},
		{"DELETE", "/api/v1/nodes/n-1", "delete", "nodes"},
		{"DELETE", "/api/v1/namespaces/ns/pods", "deletecollection", "pods"},
		{"GET", "/api/v1/namespaces/ns", "get", "namespaces"},
		{"GET", "/apis/cluster.k8s.io/v1alpha1", "get", "discovery"},
		{"GET", "/version", "get", "nonresource"},
	} {
		u, err := url.Parse(c.url)
		if err != nil {
			t.Fatal(err)
		}
		verb, resource := classify(&http.Request{Method: c.method, URL: u})
		if verb != c.verb || resource != c.resource {
			t.Errorf("%s %s: got %s %s, want %s %s", c.method, c.url, verb, resource, c.verb, c.resource)
		}
	}
}
