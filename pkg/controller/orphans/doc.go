// Package orphans sweeps the cloud for servers that carry the cluster's tag but belong to no
// Machine (left by a forced deletion, or by a crash between a create and its bookkeeping) and
// deletes them, on the leader only. It first releases what forced deletions recorded (the
// leftover record), and forgets a record only once the provider's Delete reports everything
// gone. It never deletes a server whose Machine has a Create in flight, one without a Machine
// UID, or one seen without a Machine for less than the grace period; confined to one namespace,
// it releases only what its own forced deletions left. It reaches the cloud only through
// cloud.Provider.
package orphans
