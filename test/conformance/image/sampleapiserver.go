package main

import (
	"fmt"
	"os"
	"time"

	"github.com/slipway-dev/slipway/pkg/images"
)

// sampleAPIServer is the suite's sample-apiserver image under refs, which the aggregator spec
// runs beside etcd in one pod. The binary is the main package of the release's staging module
// k8s.io/sample-apiserver (test/conformance/build.sh builds it), at /sample-apiserver as the
// entrypoint, as upstream's image has it; the spec passes only arguments (etcd on localhost,
// the serving certificate it mounts, the audit log on stdout). Upstream's sits on Alpine; a
// static Go program needs nothing of a userland, so this one is FROM scratch with pkg/images'
// base files (passwd, group, CA bundle, /tmp), as slipway's own images are. It runs as root, as
// upstream's does: the server listens on 443, which the spec's readiness probe and Service
// target.
func sampleAPIServer(binary string, refs []string, at time.Time) (images.Built, error) {
	if _, err := os.Stat(binary); err != nil {
		return images.Built{}, fmt.Errorf("sample-apiserver (test/conformance/build.sh builds it): %w", err)
	}
	built, err := images.Assemble([]images.Spec{{
		Refs:       refs,
		Binary:     binary,
		Path:       "sample-apiserver",
		Entrypoint: []string{"/sample-apiserver"},
		User:       "0:0",
		Labels: map[string]string{
			"org.opencontainers.image.title":       "sample-apiserver",
			"org.opencontainers.image.source":      "https://github.com/kubernetes/sample-apiserver",
			"org.opencontainers.image.description": "k8s.io/sample-apiserver of the release, built FROM scratch by slipway's test/conformance/image",
		},
	}}, images.Options{Created: at})
	if err != nil {
		return images.Built{}, err
	}
	return built[0], nil
}
