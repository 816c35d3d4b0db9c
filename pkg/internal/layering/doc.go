// Package layering holds no code: its test keeps the dependency rules of the repository, so that
// dependencies keep pointing one way (cmd → cli → cluster → probe, plan, phases → access,
// applied, inventory, ssh, scripts, kubeadm, addons; controller → cloud interface), the probe
// and the phases never reach into each other, and pure renderers and planning stay pure.
package layering
