package artifacts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// releaseBinaries are what dl.k8s.io serves and slipway's "URL base" install path downloads.
var releaseBinaries = []string{"kubeadm", "kubelet", "kubectl"}

// releaseTree lays out <dir>/bin/linux/amd64/{kubeadm,kubelet,kubectl} with .sha256 files next to
// them (the hex digest alone, as upstream does), with hard links into the build cache.
func (b *builder) releaseTree(r *Release) error {
	inputs := []string{"release-v1", r.Version}
	for _, name := range releaseBinaries {
		inputs = append(inputs, filepath.Join(r.Bin, name))
	}
	key, err := keyOf(inputs...)
	if err != nil {
		return err
	}
	r.ReleaseDir = b.path("release", r.Version+"-"+key)
	return b.once(r.ReleaseDir, func(tmp string) error {
		dir := filepath.Join(tmp, "bin/linux/amd64")
		for _, name := range releaseBinaries {
			if err := linkWithSum(filepath.Join(r.Bin, name), filepath.Join(dir, name)); err != nil {
				return err
			}
		}
		return nil
	})
}

// crictlVersions maps a Kubernetes minor to the cri-tools release that goes with it where that is
// not v<minor>.0. The module proxy refuses cri-tools v1.35.0 (403), and crictl talks CRI v1 to any
// supported kubelet, so v1.35 clusters get crictl v1.36.0.
var crictlVersions = map[string]string{"v1.35": "v1.36.0"}

// crictl builds crictl and packs it like the cri-tools GitHub release:
// <dir>/crictl-<version>-linux-amd64.tar.gz and its .sha256.
func (b *builder) crictl(ctx context.Context, r *Release) error {
	r.CriTools = r.Minor + ".0"
	if v, ok := crictlVersions[r.Minor]; ok {
		r.CriTools = v
	}
	bin, err := b.tool(ctx, "crictl", r.CriTools)
	if err != nil {
		return err
	}
	key, err := keyOf("crictl-release-v1", bin)
	if err != nil {
		return err
	}
	r.CrictlDir = b.path("cri-tools", r.CriTools+"-"+key)
	return b.once(r.CrictlDir, func(tmp string) error {
		name := fmt.Sprintf("crictl-%s-linux-amd64.tar.gz", r.CriTools)
		if err := writeTarGz(filepath.Join(tmp, name), []tarFile{{name: "crictl", mode: 0o755, src: bin}}); err != nil {
			return err
		}
		return writeSum(filepath.Join(tmp, name))
	})
}

// linkWithSum hard-links src to dst (copying across file systems) and writes dst.sha256.
func linkWithSum(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.Link(src, dst); err != nil {
		if err := copyFile(src, dst); err != nil {
			return err
		}
	}
	return writeSum(dst)
}

// writeSum writes path.sha256 holding the hex digest of path.
func writeSum(path string) error {
	sum, err := fileSHA256(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path+".sha256", []byte(sum), 0o644)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hashing %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copying %s to %s: %w", src, dst, err)
	}
	return out.Close()
}
