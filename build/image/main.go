// Command image builds slipway's container images, `make image`: the machine-controller from
// this checkout and the OpenStack cloud-controller-manager that slipway ships with it, FROM
// scratch and reproducibly (package pkg/images). It writes, under -out:
//
//	oci/                             an OCI image layout of both images
//	slipway-images-<version>.tar     one archive of both, for docker load, ctr images import and
//	                                 machineController.imageArchive
//	bin/machine-controller           the static binary in the image
//
// and prints each image's reference, digest and size. SOURCE_DATE_EPOCH sets the images' time
// (default: the Unix epoch).
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
	out := fs.String("out", "_out/images", "output directory")
	version := fs.String("version", "", "slipway's version, the machine-controller's tag (default: git describe --tags --always --dirty, as the Makefile)")
	revision := fs.String("revision", "", "the commit the images are built from (default: git rev-parse HEAD)")
	ccm := fs.Bool("ccm", true, "build the OpenStack cloud-controller-manager image too")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	root, err := repoRoot()
	if err != nil {
		return err
	}
	if *version == "" || *revision == "" {
		v, r := images.GitVersion(ctx, root)
		*version, *revision = or(*version, v), or(*revision, r)
	}
	created, err := images.CreatedFrom(os.Getenv("SOURCE_DATE_EPOCH"))
	if err != nil {
		return err
	}
	*out, err = filepath.Abs(*out)
	if err != nil {
		return err
	}
	return build(ctx, root, *out, *version, *revision, *ccm, images.Options{Created: created})
}

func build(ctx context.Context, root, out, version, revision string, ccm bool, o images.Options) error {
	start := time.Now()
	bin := filepath.Join(out, "bin", "machine-controller")
	if err := images.GoBuild(ctx, root, version, bin, os.Stderr); err != nil {
		return err
	}
	specs := []images.Spec{images.MachineController(bin, version, revision)}
	if ccm {
		p, err := images.BuildCCM(ctx, root, os.Stderr)
		if err != nil {
			return err
		}
		specs = append(specs, images.CloudControllerManager(p))
	}
	fmt.Fprintf(os.Stderr, "binaries %.1fs\n", time.Since(start).Seconds())
	built, err := images.Assemble(specs, o)
	if err != nil {
		return err
	}
	layoutDir := filepath.Join(out, "oci")
	if err := os.RemoveAll(layoutDir); err != nil {
		return err
	}
	if err := images.WriteLayout(layoutDir, built); err != nil {
		return err
	}
	archive := filepath.Join(out, "slipway-images-"+version+".tar")
	if err := images.WriteArchive(archive, built, o.Created); err != nil {
		return err
	}
	for _, b := range built {
		d, err := b.Image.Digest()
		if err != nil {
			return err
		}
		size, err := compressedSize(b)
		if err != nil {
			return err
		}
		fmt.Printf("%s@%s (%.1f MB compressed)\n", b.Refs[0], d, float64(size)/1e6)
	}
	fmt.Printf("layout  %s\narchive %s\n", layoutDir, archive)
	fmt.Fprintf(os.Stderr, "done in %.1fs\n", time.Since(start).Seconds())
	return nil
}

func compressedSize(b images.Built) (int64, error) {
	m, err := b.Image.Manifest()
	if err != nil {
		return 0, err
	}
	n := m.Config.Size
	for _, l := range m.Layers {
		n += l.Size
	}
	return n, nil
}

// repoRoot finds the repository root (the directory with go.mod) from the working directory up.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the slipway repository (no go.mod found above the working directory)")
		}
		dir = parent
	}
}

func or(v, def string) string {
	if v != "" {
		return v
	}
	return def
}
