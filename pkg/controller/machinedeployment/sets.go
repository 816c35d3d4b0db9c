package machinedeployment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"reflect"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/controller/internal/machineutil"
)

// templateHash names a template by what rolls (machineutil.Rolling): equal templates hash
// equal, so a change that shapes the server makes a new set and reverting it finds the old set
// again, while a change of in-place fields alone (labels, annotations, taints) keeps the set.
func templateHash(t *v1alpha1.MachineTemplateSpec) string {
	raw, _ := json.Marshal(machineutil.Rolling(t)) // a struct of plain fields cannot fail to encode
	h := fnv.New32a()
	h.Write(raw)
	return rand.SafeEncodeString(strconv.FormatUint(uint64(h.Sum32()), 10))
}

// currentSet returns the set made from template t, or nil: the first labelled with its hash,
// else the first whose template is t with another hash label, in-place fields aside. Another
// machine-controller (Kubermatic's), and this one before in-place fields, hash templates their
// own way; without the second rule, adopting their MachineDeployments would roll every Machine
// over to a new set that differs only in the hash.
func currentSet(sets []*setState, t *v1alpha1.MachineTemplateSpec, hash string) *setState {
	for _, s := range sets {
		if s.ms.Labels[v1alpha1.MachineTemplateHashLabel] == hash {
			return s
		}
	}
	for _, s := range sets {
		if madeFrom(s.ms, t) {
			return s
		}
	}
	return nil
}

// madeFrom reports whether ms's template is t plus a machine-template-hash label, in-place fields
// aside. Templates are compared as JSON values, so that neither key order nor an empty map
// against a missing one counts as a difference.
func madeFrom(ms *v1alpha1.MachineSet, t *v1alpha1.MachineTemplateSpec) bool {
	own := machineutil.Rolling(&ms.Spec.Template)
	delete(own.Labels, v1alpha1.MachineTemplateHashLabel)
	a, errA := jsonValue(own)
	b, errB := jsonValue(machineutil.Rolling(t))
	return errA == nil && errB == nil && reflect.DeepEqual(a, b)
}

func jsonValue(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = json.Unmarshal(raw, &out)
	return out, err
}

// createNewSet creates the set for the current template, sized as the surge allows.
func (r *Reconciler) createNewSet(ctx context.Context, md *v1alpha1.MachineDeployment, p deploymentParams, plan *rollout, hash string) error {
	var maxRev int64
	for _, s := range plan.oldSets {
		maxRev = max(maxRev, s.revision)
	}
	plan.newSet = &setState{}
	plan.scaleNew()
	replicas := plan.newSet.spec
	plan.newSet = nil // until the set exists
	tmpl := md.Spec.Template.DeepCopy()
	if tmpl.Labels == nil {
		tmpl.Labels = map[string]string{}
	}
	tmpl.Labels[v1alpha1.MachineTemplateHashLabel] = hash
	sel := md.Spec.Selector.DeepCopy()
	if sel.MatchLabels == nil {
		sel.MatchLabels = map[string]string{}
	}
	sel.MatchLabels[v1alpha1.MachineTemplateHashLabel] = hash
	ms := &v1alpha1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{
			Name:      md.Name + "-" + hash,
			Namespace: md.Namespace,
			Labels:    tmpl.Labels,
			Annotations: map[string]string{
				v1alpha1.RevisionAnnotation:        strconv.FormatInt(maxRev+1, 10),
				v1alpha1.DesiredReplicasAnnotation: itoa(p.replicas),
				v1alpha1.MaxReplicasAnnotation:     itoa(p.replicas + p.maxSurge),
			},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(md, v1alpha1.GroupVersion.WithKind("MachineDeployment"))},
		},
		Spec: v1alpha1.MachineSetSpec{
			Replicas:        machineutil.PtrTo(replicas),
			MinReadySeconds: machineutil.Int32Or(md.Spec.MinReadySeconds, 0),
			Selector:        *sel,
			Template:        *tmpl,
		},
	}
	if err := r.client.Create(ctx, ms); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil // the cache has not shown it yet; the create event brings us back
		}
		return fmt.Errorf("creating machineset for machinedeployment %s/%s: %w", md.Namespace, md.Name, err)
	}
	r.wrote(ms)
	plan.newSet = &setState{ms: ms, revision: maxRev + 1, spec: replicas}
	r.recorder.Eventf(md, corev1.EventTypeNormal, "ScalingMachineSet", "Created machineset %s (revision %d) with %d replicas",
		ms.Name, maxRev+1, replicas)
	return nil
}

// applySpecs writes the planned replicas, the sizing annotations, the new set's revision and
// in-place fields, and minReadySeconds to every set that needs it. Updates carry the cached
// resourceVersion, so a plan made on a stale set fails with a conflict instead of acting.
func (r *Reconciler) applySpecs(ctx context.Context, md *v1alpha1.MachineDeployment, p deploymentParams, plan *rollout) error {
	var maxOld int64
	for _, s := range plan.oldSets {
		maxOld = max(maxOld, s.revision)
	}
	var errs []error
	for _, s := range plan.all() {
		ms := s.ms.DeepCopy()
		ms.Spec.Replicas = machineutil.PtrTo(s.spec)
		ms.Spec.MinReadySeconds = machineutil.Int32Or(md.Spec.MinReadySeconds, 0)
		if s.spec != s.origSpec || (s.spec > 0 && ms.Annotations[v1alpha1.DesiredReplicasAnnotation] != itoa(p.replicas)) {
			ms.Annotations[v1alpha1.DesiredReplicasAnnotation] = itoa(p.replicas)
			ms.Annotations[v1alpha1.MaxReplicasAnnotation] = itoa(p.replicas + p.maxSurge)
		}
		if s == plan.newSet && s.revision <= maxOld {
			// The template went back to an older set's: it becomes the newest revision again.
			ms.Annotations[v1alpha1.RevisionAnnotation] = strconv.FormatInt(maxOld+1, 10)
		}
		// The current set's template follows the deployment's in-place fields; the set passes
		// them on to its Machines, and they to their Nodes, without replacing one.
		inPlace := s == plan.newSet && !machineutil.SameInPlace(&ms.Spec.Template, &md.Spec.Template)
		if inPlace {
			machineutil.SetInPlace(&ms.Spec.Template, &md.Spec.Template)
		}
		if !inPlace && equalSets(s.ms, ms) {
			continue
		}
		if err := r.client.Update(ctx, ms); err != nil {
			errs = append(errs, fmt.Errorf("updating machineset %s/%s (replicas %d): %w", ms.Namespace, ms.Name, s.spec, err))
			continue
		}
		r.wrote(ms)
		if s.spec != s.origSpec {
			r.recorder.Eventf(md, corev1.EventTypeNormal, "ScalingMachineSet", "Scaled machineset %s from %d to %d", ms.Name, s.origSpec, s.spec)
		}
		if inPlace {
			r.recorder.Eventf(md, corev1.EventTypeNormal, "UpdatedInPlace",
				"Updated the Machine annotations and the Node labels, annotations and taints of machineset %s in place", ms.Name)
		}
	}
	return errors.Join(errs...)
}

func equalSets(a, b *v1alpha1.MachineSet) bool {
	return *a.Spec.Replicas == *b.Spec.Replicas && a.Spec.MinReadySeconds == b.Spec.MinReadySeconds &&
		fmt.Sprint(a.Annotations) == fmt.Sprint(b.Annotations)
}

// cleanupHistory deletes the oldest empty old sets beyond revisionHistoryLimit.
func (r *Reconciler) cleanupHistory(ctx context.Context, md *v1alpha1.MachineDeployment, p deploymentParams, plan *rollout) error {
	var empty []*setState
	for _, s := range plan.oldSets {
		if s.spec == 0 && s.count == 0 {
			empty = append(empty, s)
		}
	}
	sort.SliceStable(empty, func(i, j int) bool { return empty[i].revision < empty[j].revision })
	var errs []error
	for i := 0; i < len(empty)-p.historyLimit; i++ {
		ms := empty[i].ms
		if err := r.client.Delete(ctx, ms, client.Preconditions{UID: &ms.UID, ResourceVersion: &ms.ResourceVersion}); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("deleting old machineset %s/%s: %w", ms.Namespace, ms.Name, err))
		}
	}
	return errors.Join(errs...)
}
