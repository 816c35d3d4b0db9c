package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// checkRestore loses every control plane and makes the cluster again with apply
// --restore-from on fresh hosts at the same addresses, from a snapshot and the PKI backup apply
// saved. The cluster must come back as the snapshot holds it: a ConfigMap written before the
// snapshot is there and one written after is not, kube-system keeps its UID, the kubeconfig and
// a ServiceAccount token from before still work, the worker (never touched) is Ready again, and
// etcd has every control plane as a member. Before that, apply refuses a restore over the
// living cluster and a corrupt snapshot, changing nothing.
func (h *harness) checkRestore(t *testing.T, manifest string, all, controlPlanes []string, version string) {
	ctx := context.Background()
	c := h.kube("e2e")
	ks, err := c.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	writeConfigMap := func(name string) {
		t.Helper()
		if _, err := c.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": "v"},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	writeConfigMap("in-the-snapshot")
	tr, err := c.CoreV1().ServiceAccounts("default").CreateToken(ctx, "default", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3600))},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(h.dir, "restore-etcd.db")
	if r := h.slipway(nil, "etcd", "snapshot", "-m", manifest, "-o", snap); r.code != 0 {
		t.Fatalf("etcd snapshot: exit code %d\n%s", r.code, r.out)
	}
	writeConfigMap("after-the-snapshot")
	// apply writes a new admin kubeconfig after the restore: keep the old one to show it works.
	oldKubeconfig := filepath.Join(h.dir, "before-restore-kubeconfig")
	data, err := os.ReadFile(filepath.Join(h.dir, "e2e-kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(oldKubeconfig, data, 0o600); err != nil {
		t.Fatal(err)
	}

	if r := h.slipway(nil, "apply", "-m", manifest, "--restore-from", snap, "--auto-approve"); r.code == 0 || !strings.Contains(r.out, "this one answers") {
		t.Errorf("a restore over the living cluster: exit code %d; want a refusal\n%s", r.code, r.out)
	}
	snapData, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	snapData[len(snapData)/2] ^= 0xff
	corrupt := filepath.Join(h.dir, "corrupt-etcd.db")
	if err := os.WriteFile(corrupt, snapData, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := h.slipway(nil, "apply", "-m", manifest, "--restore-from", corrupt, "--auto-approve"); r.code == 0 || !strings.Contains(r.out, "corrupt-etcd.db") || !strings.Contains(r.out, "SHA-256 does not match") {
		t.Errorf("a restore from a corrupt snapshot: exit code %d; want a refusal naming the file\n%s", r.code, r.out)
	}

	for _, cp := range controlPlanes {
		if err := h.sb.Recreate(ctx, cp, false); err != nil {
			t.Fatal(err)
		}
	}
	p := stepList(h.planWith(nil, manifest, "--restore-from", snap))
	for _, want := range []string{"restore-etcd on " + controlPlanes[0], "kubeadm-init on " + controlPlanes[0], "restore-finish", "join-control-plane on " + controlPlanes[1]} {
		if !slices.Contains(p, want) {
			t.Errorf("restore plan %v lacks %q", p, want)
		}
	}
	for _, s := range p {
		if strings.HasPrefix(s, "join-worker") {
			t.Errorf("restore plan %v joins a worker, which kept running", p)
		}
	}
	r := h.mustApply(manifest, "--restore-from", snap)
	t.Logf("restore of %d control planes took %s", len(controlPlanes), r.duration.Round(1e9))

	old := kubeFrom(t, oldKubeconfig, "")
	h.expectNodes(old, all, version)
	h.expectEtcdMembers(old, len(controlPlanes))
	if _, err := old.CoreV1().ConfigMaps("default").Get(ctx, "in-the-snapshot", metav1.GetOptions{}); err != nil {
		t.Errorf("a ConfigMap in the snapshot: %v", err)
	}
	if _, err := old.CoreV1().ConfigMaps("default").Get(ctx, "after-the-snapshot", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a ConfigMap written after the snapshot: %v; want NotFound", err)
	}
	if after, err := old.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{}); err != nil || after.UID != ks.UID {
		t.Errorf("kube-system after the restore: %v, UID %v; want UID %s", err, after.GetUID(), ks.UID)
	}
	sa := kubeFrom(t, oldKubeconfig, tr.Status.Token)
	review, err := sa.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || review.Status.UserInfo.Username != "system:serviceaccount:default:default" {
		t.Errorf("a ServiceAccount token from before the restore: %v; want it accepted as default/default", err)
	}
	if p := h.plan(manifest); len(p.Steps) != 0 {
		t.Errorf("the plan after the restore: %v; want nothing to do", stepList(p))
	}
}

// kubeFrom returns a client from a kubeconfig file, with its credentials replaced by token when
// token is not empty.
func kubeFrom(t *testing.T, kubeconfig, token string) *kubernetes.Clientset {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		cfg = &rest.Config{Host: cfg.Host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: cfg.CAData, CAFile: cfg.CAFile}}
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
