// Command image builds the images of the Kubernetes conformance suite that slipway builds rather
// than pulls, from what test/conformance/build.sh built, under the references the suite's
// e2e.test looks for under an image-repository override:
//
//   - agnhost, from its Go source, on a Debian userland (test/conformance/userland) that has the
//     shell, curl, nc, dig and ip the tests run in agnhost pods, as upstream's Alpine one has;
//   - busybox, Debian's static busybox with its applet links, on pkg/images' base files;
//   - glibc-dns-testing, the Debian userland itself (upstream's is Debian with dnsutils);
//   - the full run's others (more.go): nginx, nautilus, kitten, nonroot, nonewprivs and
//     sample-apiserver (sampleapiserver.go).
//
// It writes, under -out:
//
//	oci/                      an OCI image layout (what a registry serves)
//	conformance-images.tar    the same as one archive, for docker load and ctr images import
//	kube-test-repo-list.yaml  the override: e2e.test --kube-test-repo-list, or KUBE_TEST_REPO_LIST
//
// and prints each image's reference and digest. Before it writes anything, it checks that
// e2e.test, given that override, names the agnhost it built, and tags busybox and
// glibc-dns-testing with every tag of theirs that it names. SOURCE_DATE_EPOCH sets the images'
// time (default: the Unix epoch).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/slipway-dev/slipway/pkg/images"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	bin := fs.String("bin", "", "the directory with agnhost and e2e.test (what test/conformance/build.sh prints)")
	src := fs.String("kubernetes", "", "the k8s.io/kubernetes module directory of the same release (agnhost's VERSION and porter's certificates)")
	out := fs.String("out", "", "output directory (default: images beside -bin)")
	registry := fs.String("registry", upstreamRegistry, "where the suite is to look for its test images: the override's promoterE2eRegistry")
	userlandTar := fs.String("userland", "", "the Debian root filesystem tarball that test/conformance/userland/build.sh prints")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *bin == "" || *src == "" || *userlandTar == "" {
		return errors.New("-bin, -kubernetes and -userland are required (test/conformance/build.sh passes them)")
	}
	if *out == "" {
		*out = filepath.Join(filepath.Dir(*bin), "images")
	}
	created, err := images.CreatedFrom(os.Getenv("SOURCE_DATE_EPOCH"))
	if err != nil {
		return err
	}
	return build(ctx, *bin, *src, *userlandTar, *out, *registry, images.Options{Created: created})
}

func build(ctx context.Context, bin, src, userlandTar, out, registry string, o images.Options) error {
	spec, err := agnhost(filepath.Join(bin, "agnhost"), src, registry)
	if err != nil {
		return err
	}
	u, err := readUserland(userlandTar)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	// The override is checked under a temporary name: a refused build leaves the last good one.
	listFile := filepath.Join(out, "kube-test-repo-list.yaml")
	if err := os.WriteFile(listFile+".tmp", repoList(registry), 0o644); err != nil {
		return err
	}
	defer os.Remove(listFile + ".tmp")
	all, err := listed(ctx, filepath.Join(bin, "e2e.test"), listFile+".tmp", spec.Refs...)
	if err != nil {
		return err
	}
	// Each image carries every tag of its name that the suite names: agnhost's build is also
	// AgnhostPrev (the specs that use it need only a second image name to roll to).
	if spec.Refs, err = named(all, registry, "agnhost"); err != nil {
		return err
	}
	busyboxRefs, err := named(all, registry, "busybox")
	if err != nil {
		return err
	}
	dnsRefs, err := named(all, registry, "glibc-dns-testing")
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(out, ".busybox-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bb, err := busybox(ctx, u, busyboxRefs, tmp)
	if err != nil {
		return err
	}
	built, err := images.Assemble([]images.Spec{spec, bb}, o)
	if err != nil {
		return err
	}
	if built[0].Image, err = onUserland(built[0].Image, u, o.Created); err != nil {
		return fmt.Errorf("putting agnhost on the userland: %w", err)
	}
	dns, err := glibcDNSTesting(u, dnsRefs, o.Created)
	if err != nil {
		return err
	}
	built = append(built, dns)
	more, err := moreImages(bin, src, u, built[0].Image, built[1].Image, all, registry, o.Created)
	if err != nil {
		return err
	}
	built = append(built, more...)
	layoutDir := filepath.Join(out, "oci")
	if err := os.RemoveAll(layoutDir); err != nil {
		return err
	}
	if err := images.WriteLayout(layoutDir, built); err != nil {
		return err
	}
	archive := filepath.Join(out, "conformance-images.tar")
	if err := images.WriteArchive(archive, built, o.Created); err != nil {
		return err
	}
	if err := os.Rename(listFile+".tmp", listFile); err != nil {
		return err
	}
	for _, b := range built {
		d, err := b.Image.Digest()
		if err != nil {
			return err
		}
		fmt.Printf("%s@%s\n", b.Refs[0], d)
	}
	fmt.Printf("layout    %s\narchive   %s\nrepo list %s\n", layoutDir, archive, listFile)
	return nil
}

// moreImages are the images of the full run beyond the subset's (more.go, sampleapiserver.go),
// for the names the suite lists.
func moreImages(bin, src string, u *userland, agnhostImg, busyboxImg v1.Image, all []string, registry string, at time.Time) ([]images.Built, error) {
	var out []images.Built
	add := func(b images.Built, err error) error {
		if err != nil {
			return err
		}
		out = append(out, b)
		return nil
	}
	if refs := optional(all, registry, "nginx"); refs != nil {
		if err := add(nginx(u, refs, at)); err != nil {
			return nil, fmt.Errorf("nginx: %w", err)
		}
	}
	for _, name := range []string{"nautilus", "kitten"} {
		if refs := optional(all, registry, name); refs != nil {
			if err := add(demoImage(agnhostImg, src, name, refs, at)); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	if refs := optional(all, registry, "nonroot"); refs != nil {
		if err := add(nonroot(u, refs, at)); err != nil {
			return nil, fmt.Errorf("nonroot: %w", err)
		}
	}
	if refs := optional(all, registry, "nonewprivs"); refs != nil {
		if err := add(nonewprivs(busyboxImg, filepath.Join(bin, "nnp"), refs, at)); err != nil {
			return nil, fmt.Errorf("nonewprivs: %w", err)
		}
	}
	if refs := optional(all, registry, "sample-apiserver"); refs != nil {
		if err := add(sampleAPIServer(filepath.Join(bin, "sample-apiserver"), refs, at)); err != nil {
			return nil, fmt.Errorf("sample-apiserver: %w", err)
		}
	}
	return out, nil
}
