// Package scripts renders the bash scripts slipway runs on hosts over SSH: the read-only probe
// (and ParseProbe for its output), prerequisites (swap, kernel modules, sysctls, containerd and
// its registry configuration, CNI plugins, the kubelet's resolver file), installing kubeadm,
// kubelet and kubectl at an exact version, restarting the kubelet and resetting a host. Each is
// a pure function from parameters to a script, golden-tested per OS family (debian: Debian and
// Ubuntu; rhel: RHEL, Rocky, CentOS, AlmaLinux; flatcar).
//
// Every script is idempotent and quiet: it changes only what differs from the wanted state
// (a converged host sees no restart of containerd or the kubelet), and on success it prints
// only lines starting with "slipway: " that say what it changed. The whole body is one bash
// function run with stdin from /dev/null, so a script cut short in transit never runs half-way
// and no command inside can swallow the rest of the script from stdin. Every interpolated value
// is single-quoted by Quote, which rejects NUL bytes and newlines.
//
// The debian family is verified end to end on Debian 12 sandbox hosts; the rhel and flatcar
// variants are rendered and golden-tested but not yet run on real hosts.
package scripts
