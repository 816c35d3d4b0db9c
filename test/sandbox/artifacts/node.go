package artifacts

import (
	"context"
	"path/filepath"
)

// nodeImage builds (or finds) the bare host image with test/sandbox/node/build.sh.
func (b *builder) nodeImage(ctx context.Context) (string, error) {
	return b.run(ctx, nil, filepath.Join(b.opts.Root, "test/sandbox/node/build.sh"))
}

// rootfs returns the node's Debian rootfs tarball, the base of the kube-proxy image, which needs
// iptables and its libraries.
func (b *builder) rootfs(ctx context.Context) (string, error) {
	return b.run(ctx, nil, filepath.Join(b.opts.Root, "test/sandbox/node/build.sh"), "--rootfs")
}
