// Package layering holds no code: its test keeps the dependency rules of the repository, so that
// dependencies keep pointing one way (cmd → cli → cluster/steps → ssh, scripts, kubeadm,
// addons; controller → cloud interface) and pure renderers stay pure.
package layering
