// Package health replaces unhealthy Machines. The Machine controller judges a Machine's health
// (its Healthy condition: no Node joined within the join timeout, the Node NotReady longer than
// the unhealthy timeout, or the server lost); this controller deletes the unhealthy ones, and
// their MachineSets create replacements. It replaces none when more Machines of a
// MachineDeployment are unhealthy or being replaced than max-unhealthy allows (Cluster API's
// MachineHealthCheck short-circuit), none while the API server or the cloud is unreachable, and
// never a Machine with a terminal error, which a replacement would repeat. It only deletes
// Machines and never talks to a cloud.
package health
