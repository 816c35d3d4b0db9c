package workers

import "github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"

// LeaveReplicas takes spec.replicas out of every MachineDeployment of mds that the autoscaler
// sizes and that exists already, and returns their names. The manifest's replicas of such a pool
// is only its size at creation: apply then never changes the live count, whoever set it (the
// autoscaler through the scale subresource, or kubectl scale). Server-side apply removes a field
// only its applier owned once that applier leaves it out, and admission (see pkg/webhook) keeps
// the count the object had when an update carries none, so the count stays as it is either way.
func LeaveReplicas(mds []*v1alpha1.MachineDeployment, exists func(name string) bool) []string {
	var left []string
	for _, md := range mds {
		if v1alpha1.Autoscaled(md) && exists(md.Name) {
			md.Spec.Replicas = nil
			left = append(left, md.Name)
		}
	}
	return left
}
