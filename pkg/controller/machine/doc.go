// Package machine reconciles Machines: it turns a Machine into a server (through cloud.Provider)
// and a Node, and releases both on deletion (drain, delete the server and wait until it is gone,
// delete the Node and the bootstrap token, then remove the finalizer). It judges a Machine's
// health (the Healthy condition) but leaves replacing it to the health controller. It talks to
// clouds only through cloud.Provider and never imports a cloud SDK. It links a Node to a Machine
// only on the provider's answer (at most a minute old) that the Node's server is the Machine's,
// whatever spec.providerID says; it drains and deletes only a linked Node (same UID and provider
// ID) or one the provider confirms. The cloud's answer that a server runs stands for a minute
// while the Machine's Node is Ready or not there yet: a lost server silences its kubelet, and the
// Node turning NotReady reconciles the Machine, which then asks the cloud.
package machine
