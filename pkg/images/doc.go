// Package images assembles slipway's own container images from static binaries, with no base
// image to pull: the machine-controller, and the OpenStack cloud-controller-manager that slipway
// ships beside it under upstream's name. Each image is FROM scratch plus what a static Go program
// needs at run time (passwd and group with the non-root user 65532, nsswitch.conf, a CA bundle
// from the NSS roots pinned in go.mod, a writable /tmp) and the binary, with OCI labels. A Spec
// may add files and links beside the binary and run as another user, which the conformance
// suite's agnhost image needs (test/conformance/image).
//
// Assembly is reproducible: equal binaries and options give equal digests on any machine. Layer
// entries are sorted, owned by 0:0 with fixed modes and times (Options.Created, from
// SOURCE_DATE_EPOCH or the Unix epoch), layers are gzipped by the standard library at a fixed
// level, and the configuration holds no host detail. GoBuild builds the machine-controller the
// same way every time (static, -trimpath, no VCS stamp, the version by -ldflags).
//
// WriteLayout writes an OCI image layout (what the sandbox registry serves); WriteArchive writes
// one tar that is both an OCI layout and a `docker save` archive, which `docker load` and
// `ctr -n k8s.io images import` accept (what apply uploads to sites without a registry). Refs
// reads the references such an archive holds. The command behind `make image` is build/image.
package images
