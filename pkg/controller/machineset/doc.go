// Package machineset reconciles MachineSets: it keeps the number of a set's Machines at its
// replicas, creating them from the template in doubling batches and, when there are too many,
// deleting annotated, failed and not-ready Machines first, then others by the delete policy. A
// set that has more Machines than its replicas plus the overshoot threshold although its spec
// did not change is frozen (overshoot.go): it then neither creates nor deletes. It gathers its
// Machines' events for a second before it reconciles, reads nothing that the cache or its
// expectations already know, and never talks to a cloud.
package machineset
