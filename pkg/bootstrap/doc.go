// Package bootstrap renders the user-data that turns a fresh cloud server into a worker Node:
// cloud-init for Ubuntu and Debian that installs containerd, kubelet and kubeadm from a
// pkgs.k8s.io-style apt repository and runs `kubeadm join` with a per-Machine bootstrap token.
// Rendering is a pure function of Config, golden-tested; the controller supplies the token, the
// API endpoint and the CA hash.
//
// Flatcar is planned, not implemented: Flatcar boots from Ignition, not cloud-init, and has no
// package manager. The plan is a Butane config rendered by the same Config, translated to
// Ignition JSON in Go (no external tool), that writes the same kubeadm JoinConfiguration, enables
// the containerd that Flatcar ships, installs kubelet and kubeadm as a systemd-sysext image
// (Flatcar's supported way to add binaries to /usr), and runs kubeadm join from a oneshot unit.
// Render rejects flatcar with an error that says so until then.
package bootstrap
