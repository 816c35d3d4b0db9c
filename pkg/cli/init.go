package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	tfexamples "github.com/slipway-dev/slipway/terraform"
)

func newInitCommand(s Streams) *cobra.Command {
	var shape, file, tfDir string
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a commented starter manifest, and for OpenStack the Terraform example, to begin a cluster from",
		Long: `init writes a commented manifest to start a cluster from, for one of three shapes:

  single     one host runs the control plane and the workloads (the default)
  ha         three control planes behind your TCP load balancer, and two static workers
  openstack  servers on OpenStack from the Terraform configuration init writes beside it (into
             --terraform-dir): three control planes behind an Octavia load balancer reached
             through a bastion, and a pool of workers that slipway's machine-controller manages

The manifest goes to --file (cluster.yaml; - prints it). Nothing is overwritten: when the
manifest or any of the Terraform files exists already, init refuses and writes nothing. Each
manifest loads as it is (the OpenStack one with that configuration's outputs); edit the
addresses, then follow the steps in its comments. KubeOne's kubeone init and k0sctl's k0sctl
init do the same for their tools.`,
		Example: `  slipway init                         # cluster.yaml for one host
  slipway init --shape ha --file prod.yaml
  slipway init --shape openstack       # cluster.yaml and terraform/
  slipway init --file - | less`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			manifest, ok := v1beta1.Starter(shape)
			if !ok {
				return usageErrorf("--shape %q is not supported; use one of %s", shape, strings.Join(v1beta1.Shapes, ", "))
			}
			if file == "" {
				return usageErrorf("--file is empty: name the manifest to write, or - to print it")
			}
			files := map[string][]byte{}
			if file != "-" {
				files[file] = []byte(manifest)
			}
			if shape == v1beta1.ShapeOpenStack {
				if tfDir == "" {
					return usageErrorf("--terraform-dir is empty: name the directory to write the Terraform configuration into")
				}
				if err := addTree(files, tfexamples.OpenStack, "openstack", tfDir); err != nil {
					return err
				}
			} else if cmd.Flags().Changed("terraform-dir") {
				return usageErrorf("--terraform-dir is for --shape openstack: the %s shape has no Terraform configuration", shape)
			}
			written, err := writeNew(files)
			if err != nil {
				return err
			}
			if file == "-" {
				if _, err := fmt.Fprint(s.Out, manifest); err != nil {
					return err
				}
			}
			for _, f := range written {
				fmt.Fprintf(s.Err, "wrote %s\n", f)
			}
			next := fmt.Sprintf("slipway config dump -m %s", file)
			if shape == v1beta1.ShapeOpenStack {
				next += " -t " + tfDir
			}
			if file != "-" {
				fmt.Fprintf(s.Err, "next: edit %s as its comments say, then check it with %s\n", file, next)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&shape, "shape", v1beta1.ShapeSingle, "the cluster's shape: "+strings.Join(v1beta1.Shapes, ", "))
	cmd.Flags().StringVar(&file, "file", "cluster.yaml", "the manifest to write (never overwritten; - prints it)")
	cmd.Flags().StringVar(&tfDir, "terraform-dir", "terraform", "with --shape openstack: the directory to write the Terraform configuration into")
	return cmd
}

// addTree adds every file of fsys below root to files, under dir.
func addTree(files map[string][]byte, fsys fs.FS, root, dir string) error {
	return fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, root+"/")
		files[filepath.Join(dir, filepath.FromSlash(path.Clean(rel)))] = data
		return nil
	})
}

// writeNew writes files (by path), none of which may exist: it checks them all before it
// writes any, and creates each exclusively, so that nothing is overwritten and a refused run
// leaves nothing behind. It returns the paths written, sorted.
func writeNew(files map[string][]byte) ([]string, error) {
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	var exist []string
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			exist = append(exist, p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	if len(exist) > 0 {
		verb := "exists"
		if len(exist) > 1 {
			verb = "exist"
		}
		return nil, fmt.Errorf("%s %s: slipway init overwrites nothing and wrote nothing; remove it or choose another --file or --terraform-dir", strings.Join(exist, ", "), verb)
	}
	for _, p := range paths {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return nil, err
		}
		_, err = f.Write(files[p])
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("writing %s: %w", p, err)
		}
	}
	return paths, nil
}
