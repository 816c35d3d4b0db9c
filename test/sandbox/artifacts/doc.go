// Package artifacts builds, on this machine and from the Go module proxy and Debian only,
// everything a sandbox serves to its hosts: Kubernetes binaries, the control-plane images in OCI
// layouts, .deb packages in an apt repository laid out like pkgs.k8s.io, a release tree laid out
// like dl.k8s.io, and the bare node image. Every output lives in the cache directory under a key
// made of its inputs, so a warm Prepare only checks that outputs exist.
package artifacts
