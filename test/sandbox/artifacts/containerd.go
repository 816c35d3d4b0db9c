package artifacts

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// ContainerdVersion is the containerd release the sandbox builds and serves, without the leading
// v. It must be the one slipway installs (kubeversion.ContainerdFor), which a test checks: slipway
// asks the assets host for exactly that version.
const ContainerdVersion = "2.2.9"

// containerdBinaries are the files of containerd's release tarball that a node needs; runc comes
// from the node image (see test/sandbox/node).
var containerdBinaries = []string{"containerd", "containerd-shim-runc-v2", "ctr"}

// containerdRelease builds containerd from the module proxy and packs it like containerd's GitHub
// release: <dir>/containerd-<v>-linux-amd64.tar.gz holding bin/<binary>, and its .sha256sum
// ("<hex>  <file name>"). It returns <dir>.
func (b *builder) containerdRelease(ctx context.Context) (string, error) {
	built, err := b.tool(ctx, "containerd", "v"+ContainerdVersion)
	if err != nil {
		return "", err
	}
	inputs := []string{"containerd-release-v1", ContainerdVersion}
	for _, name := range containerdBinaries {
		inputs = append(inputs, filepath.Join(built, "bin", name))
	}
	key, err := keyOf(inputs...)
	if err != nil {
		return "", err
	}
	dir := b.path("containerd", ContainerdVersion+"-"+key)
	return dir, b.once(dir, func(tmp string) error {
		name := containerdTarball(ContainerdVersion)
		files := []tarFile{{name: "bin/", mode: 0o755}}
		for _, bin := range containerdBinaries {
			files = append(files, tarFile{name: "bin/" + bin, mode: 0o755, src: filepath.Join(built, "bin", bin)})
		}
		if err := writeTarGz(filepath.Join(tmp, name), files); err != nil {
			return err
		}
		sum, err := fileSHA256(filepath.Join(tmp, name))
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(tmp, name+".sha256sum"), []byte(sum+"  "+name+"\n"), 0o644)
	})
}

// containerdTarball is the release file name for version 2.2.9: containerd-2.2.9-linux-amd64.tar.gz.
func containerdTarball(version string) string {
	return fmt.Sprintf("containerd-%s-linux-amd64.tar.gz", version)
}
