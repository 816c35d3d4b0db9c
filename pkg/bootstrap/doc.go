// Package bootstrap renders the user-data that turns a fresh cloud server into a worker Node:
// cloud-init that writes the setup scripts apply runs over SSH on a static worker (pkg/scripts'
// prerequisites and install-kubernetes, rendered for the Machine's operating system and kubelet
// version from the cluster-wide Settings that apply writes into the cluster) and a runner that
// runs them and then `kubeadm join` with a per-Machine bootstrap token. Rendering is a pure
// function of Config, golden-tested; the controller supplies the token, the API endpoint, the CA
// hash and the Settings it read.
//
// Flatcar is planned, not implemented: Flatcar boots from Ignition, not cloud-init, and has no
// package manager. The plan is a Butane config rendered by the same Config, translated to
// Ignition JSON in Go (no external tool), that writes the same kubeadm JoinConfiguration, enables
// the containerd that Flatcar ships, installs kubelet and kubeadm as a systemd-sysext image
// (Flatcar's supported way to add binaries to /usr), and runs kubeadm join from a oneshot unit.
// Render rejects flatcar with an error that says so until then.
package bootstrap
