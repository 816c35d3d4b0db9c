package machinedeployment

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
)

// The annotations from which the cluster-autoscaler's clusterapi provider builds the Node a pool
// at zero replicas would get (scale from zero): it needs the CPU and memory, and reads the rest
// when it is there. Labels it otherwise takes only from the template's metadata with Cluster
// API's node label prefix, which this API does not have; taints it also reads from
// spec.template.spec.taints.
const (
	CapacityCPUAnnotation     = "capacity.cluster-autoscaler.kubernetes.io/cpu"
	CapacityMemoryAnnotation  = "capacity.cluster-autoscaler.kubernetes.io/memory"
	CapacityDiskAnnotation    = "capacity.cluster-autoscaler.kubernetes.io/ephemeral-disk"
	CapacityMaxPodsAnnotation = "capacity.cluster-autoscaler.kubernetes.io/maxPods"
	CapacityLabelsAnnotation  = "capacity.cluster-autoscaler.kubernetes.io/labels"
	CapacityTaintsAnnotation  = "capacity.cluster-autoscaler.kubernetes.io/taints"
)

// kubeletMaxPods is the pods a pool Node's kubelet admits: the kubelet's default, which the
// pools' kubelet configuration keeps.
const kubeletMaxPods = 110

// capacityAnnotations are the capacity annotations of a pool whose servers bring res, with the
// template's Node labels and taints: "" for an annotation that should not be there.
func capacityAnnotations(t *v1alpha1.MachineTemplateSpec, res cloud.Resources) map[string]string {
	out := map[string]string{
		CapacityCPUAnnotation:     fmt.Sprint(res.CPU),
		CapacityMemoryAnnotation:  fmt.Sprintf("%dMi", res.MemoryMiB),
		CapacityMaxPodsAnnotation: fmt.Sprint(kubeletMaxPods),
		CapacityDiskAnnotation:    "",
		CapacityLabelsAnnotation:  "",
		CapacityTaintsAnnotation:  "",
	}
	if res.DiskGiB > 0 {
		out[CapacityDiskAnnotation] = fmt.Sprintf("%dGi", res.DiskGiB)
	}
	var labels []string
	for _, k := range slices.Sorted(maps.Keys(t.Spec.Labels)) {
		labels = append(labels, k+"="+t.Spec.Labels[k])
	}
	out[CapacityLabelsAnnotation] = strings.Join(labels, ",")
	var taints []string
	for _, tt := range t.Spec.Taints {
		taints = append(taints, tt.Key+"="+tt.Value+":"+string(tt.Effect))
	}
	out[CapacityTaintsAnnotation] = strings.Join(taints, ",")
	return out
}

// syncCapacity keeps the capacity annotations on a MachineDeployment that the cluster-autoscaler
// sizes (it has the autoscaler's bounds), filled in from the cloud's answer for its template
// (the flavor) and the template's Node labels and taints, so that the autoscaler can grow the
// pool from zero. A cloud that cannot say, or a failed lookup, leaves them as they are and is
// reported as a CapacityUnknown event; it never stops the rollout.
func (r *Reconciler) syncCapacity(ctx context.Context, md *v1alpha1.MachineDeployment) {
	if r.opts.Resources == nil || !v1alpha1.Autoscaled(md) {
		return
	}
	template := &v1alpha1.Machine{}
	template.Namespace, template.Name = md.Namespace, md.Name
	template.Spec = *md.Spec.Template.Spec.DeepCopy()
	res, err := r.opts.Resources.Resources(ctx, template)
	if err != nil {
		r.recorder.Eventf(md, corev1.EventTypeWarning, "CapacityUnknown", "the cluster-autoscaler cannot grow this pool from zero: %v", err)
		return
	}
	want := md.DeepCopy()
	for k, v := range capacityAnnotations(&md.Spec.Template, res) {
		if v == "" {
			delete(want.Annotations, k)
		} else {
			want.Annotations[k] = v
		}
	}
	if maps.Equal(want.Annotations, md.Annotations) {
		return
	}
	if err := r.client.Patch(ctx, want, client.MergeFrom(md)); err != nil {
		r.recorder.Eventf(md, corev1.EventTypeWarning, "CapacityUnknown", "writing the capacity annotations: %v", err)
		return
	}
	md.Annotations, md.ResourceVersion = want.Annotations, want.ResourceVersion
}
