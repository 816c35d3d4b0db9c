package artifacts

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// kube builds a release's binaries with test/kube/build.sh and asks its kubeadm which etcd,
// CoreDNS and pause versions it deploys, so that no version table here can drift from kubeadm.
func (b *builder) kube(ctx context.Context, r *Release) error {
	minor, err := minorOf(r.Version)
	if err != nil {
		return err
	}
	r.Minor = minor
	script := filepath.Join(b.opts.Root, "test/kube/build.sh")
	bin, err := b.run(ctx, nil, script, r.Version, "kubeadm")
	if err != nil {
		return err
	}
	kubeadm := filepath.Join(bin, "kubeadm")
	out, err := b.run(ctx, nil, kubeadm, "config", "images", "list", "--kubernetes-version", r.Version)
	if err != nil {
		return err
	}
	r.Images = strings.Fields(out)
	etcd := ""
	for _, ref := range r.Images {
		if name, tag := splitRef(ref); name == "etcd" {
			// Image tags carry a build suffix (3.6.4-0); the module version does not.
			etcd = "v" + strings.SplitN(tag, "-", 2)[0]
		}
	}
	if etcd == "" {
		return fmt.Errorf("kubeadm %s lists no etcd image in %q", r.Version, out)
	}
	if r.Bin, err = b.run(ctx, []string{"ETCD_VERSION=" + etcd}, script, r.Version); err != nil {
		return err
	}
	got, err := b.run(ctx, nil, kubeadm, "version", "-o", "short")
	if err != nil {
		return err
	}
	if got != r.Version {
		return fmt.Errorf("kubeadm in %s reports version %q, want %s: check the build's ldflags", r.Bin, got, r.Version)
	}
	return nil
}

// tool builds one of test/kube/tools.sh's tools and returns the binary's path.
func (b *builder) tool(ctx context.Context, name, version string) (string, error) {
	args := []string{name}
	if version != "" {
		args = append(args, version)
	}
	return b.run(ctx, nil, filepath.Join(b.opts.Root, "test/kube/tools.sh"), args...)
}

// coreDNSBinary returns a CoreDNS binary for the wanted version, building each version once per
// Prepare, or the shared build that stands in for every wanted version (see ExactCoreDNS).
func (b *builder) coreDNSBinary(ctx context.Context, want string) (string, error) {
	if b.sharedCoreDNS != "" {
		want = b.sharedCoreDNS
	}
	if p, ok := b.coreDNS[want]; ok {
		return p, nil
	}
	p, err := b.tool(ctx, "coredns", want)
	if err != nil {
		return "", err
	}
	if b.coreDNS == nil {
		b.coreDNS = map[string]string{}
	}
	b.coreDNS[want] = p
	return p, nil
}

// minorOf returns v1.34 for v1.36.3 and rejects anything that is not a plain release version,
// because versions end up in paths, URLs and shell commands.
func minorOf(version string) (string, error) {
	parts := strings.Split(strings.TrimPrefix(version, "v"), ".")
	if !strings.HasPrefix(version, "v") || len(parts) != 3 {
		return "", fmt.Errorf("kubernetes version %q: want vMAJOR.MINOR.PATCH", version)
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return "", fmt.Errorf("kubernetes version %q: want vMAJOR.MINOR.PATCH", version)
		}
	}
	return "v" + parts[0] + "." + parts[1], nil
}

// splitRef splits registry.k8s.io/coredns/coredns:v1.12.1 into coredns/coredns and v1.12.1.
func splitRef(ref string) (name, tag string) {
	ref = strings.TrimPrefix(ref, "registry.k8s.io/")
	i := strings.LastIndex(ref, ":")
	if i < 0 {
		return ref, "latest"
	}
	return ref[:i], ref[i+1:]
}

// newestCoreDNS returns the highest CoreDNS tag that any release's kubeadm wants.
func newestCoreDNS(releases []Release) string {
	newest := ""
	for _, r := range releases {
		for _, ref := range r.Images {
			if name, tag := splitRef(ref); name == "coredns/coredns" && (newest == "" || versionLess(newest, tag)) {
				newest = tag
			}
		}
	}
	return newest
}

// versionLess compares vX.Y.Z versions numerically.
func versionLess(a, b string) bool {
	pa := strings.Split(strings.TrimPrefix(a, "v"), ".")
	pb := strings.Split(strings.TrimPrefix(b, "v"), ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if x != y {
			return x < y
		}
	}
	return len(pa) < len(pb)
}
