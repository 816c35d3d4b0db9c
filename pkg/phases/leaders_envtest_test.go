package phases

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/test/envtest"
)

// TestWaitLeaders checks, against a real apiserver, that the wait after a control plane's
// upgrade holds the next node back while the controller manager's Lease is only what a stopped
// leader left behind (and while the scheduler's is missing), and ends once both are renewed.
func TestWaitLeaders(t *testing.T) {
	env := envtest.Get(t)
	kc, err := kube.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	saved := kube.Poll
	kube.Poll = 50 * time.Millisecond
	t.Cleanup(func() { kube.Poll = saved })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	leases := kc.Kube.CoordinationV1().Leases("kube-system")
	if _, err := kc.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	leaseSeconds := int32(15)
	holder := "cp-1_old-process"
	stale := metav1.NewMicroTime(time.Now().Add(-5 * time.Second))
	kcm, err := leases.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-controller-manager", Namespace: "kube-system"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, RenewTime: &stale, LeaseDurationSeconds: &leaseSeconds},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	done := make(chan error, 1)
	go func() { done <- waitLeaders(ctx, kc, "kube-controller-manager", "kube-scheduler") }()
	notYet := func(why string) {
		t.Helper()
		select {
		case err := <-done:
			t.Fatalf("the wait ended (%v) although %s", err, why)
		case <-time.After(20 * kube.Poll):
		}
	}
	notYet("the controller manager's lease is stale and the scheduler has none")

	// A new controller manager takes over; the scheduler still has no lease.
	newHolder := "cp-1_new-process"
	now := metav1.NewMicroTime(time.Now())
	kcm.Spec.HolderIdentity, kcm.Spec.RenewTime, kcm.Spec.AcquireTime = &newHolder, &now, &now
	if _, err := leases.Update(ctx, kcm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	notYet("the scheduler has no lease")

	// The scheduler's lease appears (seen once, so not yet proof of life), then is renewed.
	sched, err := leases.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-scheduler", Namespace: "kube-system"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &newHolder, RenewTime: &now, LeaseDurationSeconds: &leaseSeconds},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	notYet("the scheduler's lease was not renewed while watched")
	later := metav1.NewMicroTime(time.Now())
	sched.Spec.RenewTime = &later
	if _, err := leases.Update(ctx, sched, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("waitLeaders: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the wait did not end after both leases were renewed")
	}
}
