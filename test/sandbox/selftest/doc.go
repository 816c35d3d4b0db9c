// Package selftest proves a sandbox sound with a raw kubeadm bootstrap, without slipway: it adds
// two bare hosts, installs Kubernetes on them from the sandbox's apt repository, pulls every image
// through the registry mirror, runs kubeadm init and join, wires pod routes by hand, waits for
// Ready nodes and CoreDNS, reports each step's time, and removes the two hosts again. Its
// timings are the physical-limit baseline that slipway's apply is measured against. The node
// side is three short shell scripts, kept apart from slipway's code on purpose.
package selftest
