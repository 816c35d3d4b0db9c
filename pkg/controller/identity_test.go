package controller_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/controller"
	"github.com/slipway-dev/slipway/test/envtest"
)

// TestIdentity: with its own credentials and RBAC, the controller learns who it is (the one
// user admission lets write spec.providerID) and which cluster it serves (the kube-system
// namespace's UID, which marks its servers).
func TestIdentity(t *testing.T) {
	env := envtest.Get(t)
	ctx := context.Background()
	user, err := controller.ControllerUser(ctx, env.ControllerConfig)
	if err != nil || user != envtest.ServiceAccount {
		t.Fatalf("ControllerUser = %q, %v; want %s", user, err, envtest.ServiceAccount)
	}
	reader, err := client.New(env.ControllerConfig, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	uid, err := controller.ClusterUID(ctx, reader)
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "kube-system"}, ns); err != nil {
		t.Fatal(err)
	}
	if uid != string(ns.UID) || uid == "" {
		t.Fatalf("ClusterUID = %q, want kube-system's UID %q", uid, ns.UID)
	}
}
