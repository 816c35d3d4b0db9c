// Package drain owns node drains: it cordons a Node and moves its pods off through the Eviction
// API (policy/v1), so PodDisruptionBudgets are honoured, and it reads per-Pod drain rules from
// annotations. It is Slipway's replacement for k8s.io/kubectl/pkg/drain, which brings kubectl's
// command utilities into every binary that uses it.
//
// # Which pods a drain touches
//
// A drain lists the pods bound to the Node and sorts each into one of four kinds:
//
//   - Left alone: mirror pods (the API's copy of a static pod, which only the kubelet's manifest
//     directory can remove), pods controlled by a DaemonSet (its controller would put them back,
//     and they tolerate the cordon), and pods annotated drain.slipway.dev/skip: "true".
//   - Waited for: pods annotated drain.slipway.dev/wait-for-completion: "true" are never
//     evicted. The drain waits until they finish by themselves (phase Succeeded or Failed) or
//     are deleted, for as long as the drain's timeout allows. Use it for batch jobs that must not
//     be interrupted.
//   - Evicted: every other pod, including pods that have already finished.
//   - Refused: an evictable pod whose data or owner the options do not allow to lose makes the
//     whole drain fail before anything is evicted: a pod with an emptyDir volume unless
//     Options.DeleteEmptyDirData is set (its data dies with the pod), and a pod that no
//     controller owns unless Options.EvictUnmanaged is set (nothing recreates it elsewhere).
//     Pods that are already terminating or have finished are never refused.
//
// # Order
//
// Evicted pods go in drain order, read from drain.slipway.dev/order: "<integer>" (0 when absent;
// negative values are allowed). All pods of the lowest order are evicted together; the pods of
// the next order are evicted only when every pod of the previous one is gone, checked by UID so
// that a pod recreated under the same name does not count as the old one. Put a database at a
// higher order than its clients, for example, so the clients stop first.
//
// Annotation values are checked: "yes" for skip or "first" for order fails the drain with an
// error naming the pod and the annotation, rather than being guessed at.
//
// # Refusals and timeouts
//
// The API server answers 429 Too Many Requests when an eviction would break a
// PodDisruptionBudget. Drain retries such a pod with exponential backoff (Options.Backoff)
// until the budget allows it or the drain's timeout passes; Pass reports it as blocked and
// leaves the retry to its caller, a controller that requeues rather than blocks a worker.
package drain
