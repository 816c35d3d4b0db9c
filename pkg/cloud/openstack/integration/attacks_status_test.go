package integration_test

import (
	"context"
	"testing"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/csr/csrtest"
	"github.com/slipway-dev/slipway/test/envtest"
)

// foreignIP is the address of the foreign Node, a control plane without a provider ID (as a
// host that slipway apply joined has). Nothing is ever sent to it.
const foreignIP = "192.0.2.10"

// TestAttackForgedMachineStatus: someone who may write machines/status, and nothing else,
// points a running Machine's status.nodeRef at a Node that is not its own (a control plane with
// a pod) and its status.addresses at that Node's address. Then the Machine's own kubelet asks
// for a serving certificate for that address, and the Machine is deleted. The controller trusts
// only the Node it linked itself (by UID, for a server the cloud confirmed) and the addresses
// the cloud reported: the certificate stays pending, and the deletion drains and deletes the
// Machine's own Node, never the foreign one, which is neither cordoned nor claimed nor drained.
func TestAttackForgedMachineStatus(t *testing.T) {
	a := newAttack(t, nil)
	fn := a.foreignNode("", corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: foreignIP})
	foreign := fn.node
	// eve may write the status of the namespace's Machines, and nothing else.
	eve := a.user("eve", []rbacv1.PolicyRule{{APIGroups: []string{"cluster.k8s.io"}, Resources: []string{"machines/status"},
		Verbs: []string{"get", "update", "patch"}}})

	m := a.machine("mine", nil)
	if err := a.mallory.Create(a.ctx, m); err != nil {
		t.Fatal(err)
	}
	waitRunningMachine(a, m)
	own := m.Status.NodeRef.Name
	var ownIP string
	for _, addr := range m.Status.Addresses {
		if addr.Type == corev1.NodeInternalIP {
			ownIP = addr.Address
		}
	}
	kubelet := a.kubeletOf(own)
	good := a.servingRequest(kubelet, own, []string{ownIP})
	envtest.Eventually(t, wait, "the Machine's own serving certificate approved", func() (bool, string) {
		return isApproved(a, good), "pending"
	})

	// forge writes the foreign address into the Machine's status, and points its nodeRef at
	// the Node named.
	forge := func(node *corev1.Node) {
		t.Helper()
		cur := &v1alpha1.Machine{}
		if err := a.env.Client.Get(a.ctx, client.ObjectKeyFromObject(m), cur); err != nil {
			t.Fatal(err)
		}
		orig := cur.DeepCopy()
		cur.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", APIVersion: "v1", Name: node.Name, UID: node.UID}
		cur.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ownIP},
			{Type: corev1.NodeInternalIP, Address: foreignIP}}
		if err := eve.Status().Patch(a.ctx, cur, client.MergeFrom(orig)); err != nil {
			t.Fatalf("eve could not write the Machine's status: %v", err)
		}
	}
	ownNode := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: own}}
	a.env.Get(t, ownNode)
	forge(ownNode)
	bad := a.servingRequest(kubelet, own, []string{ownIP, foreignIP})
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if isApproved(a, bad) {
			t.Fatalf("approved a serving certificate of node %s for the foreign address %s", own, foreignIP)
		}
		forge(ownNode) // whatever the controller wrote back meanwhile
	}

	forge(foreign)
	if err := a.env.Client.Delete(a.ctx, m); err != nil {
		t.Fatal(err)
	}
	envtest.Eventually(t, wait, "machine "+m.Name+" released", func() (bool, string) {
		return !a.env.Get(t, m.DeepCopy()), "still there"
	})
	a.untouched(fn)
	if a.env.Get(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: own}}) {
		t.Fatalf("the Machine's own Node %s outlived it", own)
	}
}

// kubeletOf is a client authenticated as node's kubelet (system:node:<node> in system:nodes),
// with the rights a kubelet has over CSRs.
func (a *attack) kubeletOf(node string) kubernetes.Interface {
	a.t.Helper()
	user := "system:node:" + node
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "csr-" + a.ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:node-bootstrapper"},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: user}}}
	if err := a.env.Client.Create(a.ctx, binding); err != nil {
		a.t.Fatal(err)
	}
	a.t.Cleanup(func() { _ = a.env.Client.Delete(context.Background(), binding) })
	cfg, err := a.env.User(user, "system:nodes")
	if err != nil {
		a.t.Fatal(err)
	}
	return kubernetes.NewForConfigOrDie(cfg)
}

// servingRequest creates a kubelet serving CSR for node's name and ips, as its kubelet does.
func (a *attack) servingRequest(kubelet kubernetes.Interface, node string, ips []string) string {
	a.t.Helper()
	csr := csrtest.Serving(a.t, "system:node:"+node, []string{node}, ips)
	csr.GenerateName = "csr-" + a.ns + "-"
	csr.Spec.Username = ""
	out, err := kubelet.CertificatesV1().CertificateSigningRequests().Create(a.ctx, csr, metav1.CreateOptions{})
	if err != nil {
		a.t.Fatalf("creating a CSR as node %s: %v", node, err)
	}
	a.t.Cleanup(func() {
		_ = a.env.Kube.CertificatesV1().CertificateSigningRequests().Delete(context.Background(), out.Name, metav1.DeleteOptions{})
	})
	return out.Name
}

func isApproved(a *attack, name string) bool {
	c := &certv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name}}
	a.env.Get(a.t, c)
	for _, cond := range c.Status.Conditions {
		if cond.Type == certv1.CertificateApproved && cond.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
