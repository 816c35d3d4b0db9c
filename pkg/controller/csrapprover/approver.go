package csrapprover

import (
	"context"
	"fmt"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/controller/internal/index"
	"github.com/slipway-dev/slipway/pkg/controller/internal/nodelink"
	csrcheck "github.com/slipway-dev/slipway/pkg/csr"
)

// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests,verbs=get;list;watch
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests/approval,verbs=update
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=signers,resourceNames=kubernetes.io/kubelet-serving,verbs=approve

// Reconciler approves the serving-certificate requests of kubelets that joined as Machines,
// and only when every name and address in the request belongs to that Machine's server as the
// cloud reported it: a kubelet must not obtain a certificate for someone else's address. Requests it cannot vouch for are left
// pending for a human or another approver.
type Reconciler struct {
	client   client.Client
	kube     kubernetes.Interface
	recorder record.EventRecorder
}

// New returns the approver.
func New(c client.Client, kube kubernetes.Interface, recorder record.EventRecorder) *Reconciler {
	return &Reconciler{client: c, kube: kube, recorder: recorder}
}

// SetupWithManager adds the approver to mgr. A kubelet asks for its serving certificate as soon
// as its Node registered, often before the controller linked the Node to its Machine: a
// Machine whose annotations change looks at the pending requests of its linked Node again.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("csrapprover").For(&certv1.CertificateSigningRequest{}).
		Watches(&v1alpha1.Machine{}, handler.EnqueueRequestsFromMapFunc(r.requestsOfMachine),
			builder.WithPredicates(predicate.AnnotationChangedPredicate{})).
		Complete(r)
}

// requestsOfMachine maps a Machine to the pending serving requests of the Node linked to it.
func (r *Reconciler) requestsOfMachine(ctx context.Context, o client.Object) []reconcile.Request {
	l := nodelink.Of(o.(*v1alpha1.Machine))
	if l == nil {
		return nil
	}
	var list certv1.CertificateSigningRequestList
	if err := r.client.List(ctx, &list); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if name, ok := csrcheck.NodeName(&list.Items[i]); ok && name == l.Name && csrcheck.Pending(&list.Items[i]) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: list.Items[i].Name}})
		}
	}
	return out
}

func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	csr := &certv1.CertificateSigningRequest{}
	if err := r.client.Get(ctx, req.NamespacedName, csr); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	nodeName, ok := csrcheck.NodeName(csr)
	if !ok || !csrcheck.Pending(csr) {
		return ctrl.Result{}, nil
	}
	var machines v1alpha1.MachineList
	if err := r.client.List(ctx, &machines, client.MatchingFields{index.LinkedNode: nodeName}); err != nil {
		return ctrl.Result{}, fmt.Errorf("finding the machine of node %s: %w", nodeName, err)
	}
	if len(machines.Items) != 1 {
		return ctrl.Result{}, nil // not ours to judge
	}
	m := &machines.Items[0]
	node := &corev1.Node{}
	if err := r.client.Get(ctx, client.ObjectKey{Name: nodeName}, node); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	link := nodelink.Of(m)
	if !link.Matches(m, node) {
		return ctrl.Result{}, nil // another Node under the linked one's name
	}
	if err := csrcheck.CheckServing(csr, nodeName, link.Addresses); err != nil {
		r.recorder.Eventf(m, corev1.EventTypeWarning, "CSRNotApproved", "Not approving %s: %v", csr.Name, err)
		return ctrl.Result{}, nil
	}
	csr.Status.Conditions = append(csr.Status.Conditions, certv1.CertificateSigningRequestCondition{
		Type: certv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "MachineAddressesMatch",
		Message: fmt.Sprintf("names and addresses belong to Machine %s/%s", m.Namespace, m.Name), LastUpdateTime: metav1.Now(),
	})
	if _, err := r.kube.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
		return ctrl.Result{}, fmt.Errorf("approving %s: %w", csr.Name, err)
	}
	return ctrl.Result{}, nil
}
