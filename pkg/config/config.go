// Package config turns the user's inputs into one validated cluster description: it reads the
// manifest strictly, merges the Terraform output into it, applies defaults, resolves local paths
// and validates the result, worker pools included as the machine-controller would check them. Every command that needs a cluster goes through Load, so they all
// accept and reject exactly the same inputs.
package config

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack"
	"github.com/slipway-dev/slipway/pkg/internal/bounded"
	"github.com/slipway-dev/slipway/pkg/strict"
	"github.com/slipway-dev/slipway/pkg/terraform"
	"github.com/slipway-dev/slipway/pkg/workers"
)

// Options say where the inputs come from.
type Options struct {
	// ManifestPath is the cluster manifest file; "-" reads stdin.
	ManifestPath string
	// TerraformSource is a file, a directory or "-"; empty means none.
	TerraformSource string
	// Terraform is the output TerraformSource names, already read (LoadTerraform), for a caller
	// that reads it too; nil reads it from TerraformSource.
	Terraform *terraform.Output
	// Stdin is read for "-".
	Stdin io.Reader
	// ImageTag is the default machine-controller image tag.
	ImageTag string
	// LookupEnv reads the environment that apply deploys the machine-controller's configuration
	// from: its SLIPWAY_ALLOW_* variables say what Machines may choose, and worker pools are
	// checked under that policy. nil reads nothing: the controller's defaults.
	LookupEnv func(string) (string, bool)
}

// Result is a loaded cluster.
type Result struct {
	Cluster  *v1beta1.Cluster
	Warnings []string
}

// Error is an invalid input: the manifest or the Terraform output is wrong. Commands exit with a
// distinct code for it.
type Error struct {
	// Source names the input at fault (a file name or "terraform output").
	Source string
	// Err lists the problems.
	Err error
}

// maxProblems bounds how many problems Error lists: a large broken input can have hundreds of
// thousands, and the first ones say what is wrong.
const maxProblems = 50

func (e *Error) Error() string {
	var agg interface{ Errors() []error }
	if errors.As(e.Err, &agg) && len(agg.Errors()) > 1 {
		all := agg.Errors()
		var b strings.Builder
		fmt.Fprintf(&b, "%s is invalid (%d problems):", e.Source, len(all))
		for i, err := range all {
			if i == maxProblems {
				fmt.Fprintf(&b, "\n  - ... and %d more", len(all)-maxProblems)
				break
			}
			b.WriteString("\n  - ")
			b.WriteString(shorten(err.Error()))
		}
		return b.String()
	}
	return fmt.Sprintf("%s is invalid: %s", e.Source, shorten(e.Err.Error()))
}

// maxProblemBytes bounds one problem's message, which quotes the value at fault.
const maxProblemBytes = 1000

func shorten(msg string) string {
	if len(msg) <= maxProblemBytes {
		return msg
	}
	return strings.ToValidUTF8(msg[:maxProblemBytes], "") + fmt.Sprintf("... (%d more bytes)", len(msg)-maxProblemBytes)
}

func (e *Error) Unwrap() error { return e.Err }

// ArgumentError is a command line that names no input to load: no manifest, or the manifest
// and the Terraform output both on stdin. It is the caller's mistake, not the inputs', and
// commands report it as a wrong command line.
type ArgumentError struct{ Err error }

func (e *ArgumentError) Error() string { return e.Err.Error() }
func (e *ArgumentError) Unwrap() error { return e.Err }

// Load reads, merges, defaults and validates. Problems with the inputs are returned as *Error,
// options that name no input to read as *ArgumentError.
func Load(ctx context.Context, opts Options) (*Result, error) {
	if opts.ManifestPath == "" {
		return nil, &ArgumentError{Err: errors.New("no manifest: pass -m/--manifest with the cluster manifest (slipway init or slipway config print writes a starting point)")}
	}
	if opts.ManifestPath == "-" && opts.TerraformSource == "-" && opts.Terraform == nil {
		return nil, &ArgumentError{Err: errors.New("the manifest and the Terraform output cannot both be read from stdin")}
	}
	data, err := readManifest(opts)
	if err != nil {
		return nil, err
	}
	c, tree, err := Decode(data)
	if err != nil {
		return nil, &Error{Source: opts.ManifestPath, Err: err}
	}
	var tfWarnings []string
	if opts.TerraformSource != "" || opts.Terraform != nil {
		out := opts.Terraform
		if out == nil {
			if out, err = LoadTerraform(ctx, opts.TerraformSource, opts.Stdin); err != nil {
				return nil, err
			}
		}
		tfWarnings = out.Warnings
		if errs := terraform.Merge(c, tree, out); len(errs) > 0 {
			return nil, &Error{Source: opts.ManifestPath + " with terraform output " + opts.TerraformSource, Err: errs.ToAggregate()}
		}
	}
	v1beta1.SetDefaults(c, opts.ImageTag)
	resolvePaths(c, baseDir(opts.ManifestPath))
	errs, warnings := v1beta1.Validate(c)
	if len(errs) > 0 {
		return nil, &Error{Source: opts.ManifestPath, Err: errs.ToAggregate()}
	}
	if err := checkPools(c, opts); err != nil {
		return nil, err
	}
	return &Result{Cluster: c, Warnings: append(tfWarnings, warnings...)}, nil
}

// LoadTerraform reads the Terraform output source names (a file, a directory or "-" for stdin)
// as Load does: an output that is not slipway's contract (or KubeOne's) is an *Error naming it,
// and terraform that is missing or fails is an error of the environment.
func LoadTerraform(ctx context.Context, source string, stdin io.Reader) (*terraform.Output, error) {
	out, err := terraform.Load(ctx, source, stdin)
	if err == nil {
		return out, nil
	}
	// Terraform that is missing or fails is the environment's problem, not the output's.
	if errors.Is(err, terraform.ErrTerraformMissing) || errors.Is(err, terraform.ErrTerraformFailed) {
		return nil, err
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return nil, &Error{Source: "terraform output " + source, Err: err}
	}
	return nil, &Error{Source: "terraform output " + source, Err: unwrapSource(err)}
}

// checkPools refuses, before anything is applied, a worker pool that the machine-controller
// would refuse, under the policy that apply deploys with it (see workers.Check).
func checkPools(c *v1beta1.Cluster, opts Options) error {
	if len(c.Workers) == 0 {
		return nil
	}
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = func(string) (string, bool) { return "", false }
	}
	pol, err := openstack.PolicyFromEnv(lookup)
	if err != nil {
		return fmt.Errorf("the machine-controller's configuration in the environment: %w", err)
	}
	if errs := workers.Check(c, pol); len(errs) > 0 {
		source := opts.ManifestPath
		if opts.TerraformSource != "" {
			source += " with terraform output " + opts.TerraformSource
		}
		return &Error{Source: source, Err: errs.ToAggregate()}
	}
	return nil
}

// Decode strictly decodes a manifest and returns it with its document tree.
func Decode(data []byte) (*v1beta1.Cluster, any, error) {
	var c v1beta1.Cluster
	tree, err := strict.DecodeTree(data, &c, nil)
	if err != nil {
		return nil, nil, err
	}
	return &c, tree, nil
}

// MaxManifestBytes bounds the manifest. Real manifests are a few KiB; parsing costs about a
// hundred times the document's size in memory, so a larger input is refused before parsing.
const MaxManifestBytes = 1 << 20

func readManifest(opts Options) ([]byte, error) {
	var data []byte
	var err error
	if opts.ManifestPath == "-" {
		if opts.Stdin == nil {
			return nil, &Error{Source: "stdin", Err: errors.New("reading manifest: no standard input")}
		}
		data, err = bounded.ReadAll(opts.Stdin, MaxManifestBytes, "the manifest on stdin")
	} else {
		data, err = bounded.ReadFile(opts.ManifestPath, MaxManifestBytes)
	}
	if err != nil {
		return nil, &Error{Source: opts.ManifestPath, Err: fmt.Errorf("reading manifest: %w", err)}
	}
	return data, nil
}

// unwrapSource drops terraform.Load's own "terraform output X:" prefix, which Error repeats.
func unwrapSource(err error) error {
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	return err
}

func baseDir(manifest string) string {
	if manifest == "-" {
		return "."
	}
	return filepath.Dir(manifest)
}

// resolvePaths makes local file paths absolute: relative to the manifest, with ~ expanded.
func resolvePaths(c *v1beta1.Cluster, dir string) {
	fix := func(p *string) {
		if *p == "" {
			return
		}
		if home, err := os.UserHomeDir(); err == nil && (*p == "~" || strings.HasPrefix(*p, "~/")) {
			*p = filepath.Join(home, strings.TrimPrefix(*p, "~"))
		}
		if !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
		if abs, err := filepath.Abs(*p); err == nil {
			*p = abs
		}
	}
	for _, hosts := range [][]v1beta1.Host{c.ControlPlane.Hosts, c.StaticWorkers.Hosts} {
		for i := range hosts {
			fix(&hosts[i].SSHPrivateKeyFile)
			if !strings.HasPrefix(hosts[i].SSHAgentSocket, "env:") {
				fix(&hosts[i].SSHAgentSocket)
			}
			for b := hosts[i].Bastion; b != nil; b = b.Bastion {
				fix(&b.PrivateKeyFile)
			}
		}
	}
	if c.Assets.Upload != nil {
		fix(&c.Assets.Upload.Directory)
	}
	if c.Addons != nil {
		fix(&c.Addons.Path)
	}
	fix(&c.MachineController.ImageArchive)
	for name, r := range c.ContainerRuntime.Containerd.Registries {
		if r.TLSConfig != nil {
			fix(&r.TLSConfig.CAFile)
			c.ContainerRuntime.Containerd.Registries[name] = r
		}
	}
}

// FieldErrors returns the field errors inside err, if any.
func FieldErrors(err error) field.ErrorList {
	var list field.ErrorList
	var agg interface{ Errors() []error }
	if errors.As(err, &agg) {
		for _, e := range agg.Errors() {
			var fe *field.Error
			if errors.As(e, &fe) {
				list = append(list, fe)
			}
		}
	}
	return list
}
