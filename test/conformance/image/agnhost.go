package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/slipway-dev/slipway/pkg/images"
)

// upstreamRegistry is where the suite looks for agnhost, and for most of its test images, when no
// override names another: the promoterE2eRegistry key of its image-repository list.
const upstreamRegistry = "registry.k8s.io/e2e-test-images"

// agnhostDir is agnhost's directory in the k8s.io/kubernetes module: its VERSION (the tag its
// image carries, which the release's test/utils/image manifest names) and porter's certificates.
const agnhostDir = "test/images/agnhost"

// agnhost is the suite's agnhost image under registry (the promoterE2eRegistry of an override),
// laid out like upstream's: /agnhost as the entrypoint with "pause" as its default argument,
// /agnhost-2 a link to it (the entrypoint tests run it by that name), porter's serving
// certificate and key in / (porter's working directory), /uploads for netexec, the user and
// group that the supplemental-groups tests expect in the image, and root as the user. src is
// the k8s.io/kubernetes module directory of the release the binary was built from.
//
// Upstream puts it on Alpine with a shell, curl, nc, dig and iproute2; build puts this one on
// the Debian userland that has them (onUserland).
func agnhost(binary, src, registry string) (images.Spec, error) {
	tag, err := agnhostTag(src)
	if err != nil {
		return images.Spec{}, err
	}
	files := []images.File{
		{Name: "agnhost-2", Link: "agnhost"},
		{Name: "uploads/", Mode: 0o755},
		{Name: "etc/passwd", Mode: 0o644, Data: []byte(passwd)},
		{Name: "etc/group", Mode: 0o644, Data: []byte(group)},
	}
	for _, name := range []string{"localhost.crt", "localhost.key"} {
		data, err := os.ReadFile(filepath.Join(src, agnhostDir, "porter", name))
		if err != nil {
			return images.Spec{}, fmt.Errorf("porter's certificate: %w", err)
		}
		files = append(files, images.File{Name: name, Mode: 0o644, Data: data})
	}
	return images.Spec{
		Refs:       []string{strings.TrimSuffix(registry, "/") + "/agnhost:" + tag},
		Binary:     binary,
		Path:       "agnhost",
		Entrypoint: []string{"/agnhost"},
		Cmd:        []string{"pause"},
		User:       "0:0",
		Files:      files,
		Labels: map[string]string{
			"org.opencontainers.image.title":       "agnhost",
			"org.opencontainers.image.version":     tag,
			"org.opencontainers.image.source":      "https://github.com/kubernetes/kubernetes",
			"org.opencontainers.image.description": "k8s.io/kubernetes " + agnhostDir + " " + tag + ", built FROM scratch by slipway's test/conformance/image",
		},
	}, nil
}

// passwd and group are the base's users plus the ones upstream's agnhost adds for the
// supplemental-groups tests (uid 1000 in gid 50000).
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
		"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n" +
		"user-defined-in-image:x:1000:1000::/home/user-defined-in-image:/sbin/nologin\n"
	group = "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\nuser-defined-in-image:x:1000:\n" +
		"group-defined-in-image:x:50000:user-defined-in-image\n"
)

// agnhostTag is the agnhost version of the release at src, from agnhost's VERSION file.
func agnhostTag(src string) (string, error) {
	b, err := os.ReadFile(filepath.Join(src, agnhostDir, "VERSION"))
	if err != nil {
		return "", fmt.Errorf("agnhost's version: %w", err)
	}
	tag := strings.TrimSpace(string(b))
	if tag == "" || strings.ContainsAny(tag, " \t\n:/") {
		return "", fmt.Errorf("agnhost's VERSION holds %q, not a tag", b)
	}
	return tag, nil
}

// repoList is the suite's image-repository override (e2e.test --kube-test-repo-list, or
// KUBE_TEST_REPO_LIST) that points it at registry for agnhost and the other images under
// promoterE2eRegistry; every other registry keeps its default.
func repoList(registry string) []byte {
	return []byte("promoterE2eRegistry: " + strings.TrimSuffix(registry, "/") + "\n")
}

// listed runs e2e.test --list-images with the override in listFile and returns the images it
// names, sorted, or an error naming the refs it does not name.
func listed(ctx context.Context, e2eTest, listFile string, refs ...string) ([]string, error) {
	cmd := exec.CommandContext(ctx, e2eTest, "--list-images", "--kube-test-repo-list", listFile)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s --list-images: %w: %s", e2eTest, err, tail(stderr.String()))
	}
	listed := strings.Fields(string(out))
	slices.Sort(listed)
	for _, ref := range refs {
		if !slices.Contains(listed, ref) {
			return listed, fmt.Errorf("%s does not use %s: the built agnhost and the suite disagree (it lists %s)", e2eTest, ref, strings.Join(listed, " "))
		}
	}
	return listed, nil
}

// named returns the references among listed of the image called name under registry, or an
// error when the suite names none.
func named(listed []string, registry, name string) ([]string, error) {
	prefix := strings.TrimSuffix(registry, "/") + "/" + name + ":"
	var refs []string
	for _, ref := range listed {
		if strings.HasPrefix(ref, prefix) {
			refs = append(refs, ref)
		}
	}
	if len(refs) == 0 {
		return nil, fmt.Errorf("the suite names no %s image under %s (it lists %s)", name, registry, strings.Join(listed, " "))
	}
	return refs, nil
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 2048 {
		s = s[len(s)-2048:]
	}
	return s
}
