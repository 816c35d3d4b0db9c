// Package machinedeployment reconciles MachineDeployments: it rolls MachineSets over when the
// template changes, as the Deployment controller does for ReplicaSets, within maxSurge and
// maxUnavailable, and resizes the sets when replicas change. It creates, scales and deletes
// MachineSets only, never Machines, and changes nothing while one of its sets is frozen. It
// gathers its sets' and Machines' events for a second before it reconciles, never plans on a
// cached set older than its own last write, and never talks to a cloud.
package machinedeployment
