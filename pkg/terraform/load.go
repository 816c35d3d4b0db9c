package terraform

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/hashicorp/terraform-exec/tfexec"
	"go.yaml.in/yaml/v3"

	"github.com/slipway-dev/slipway/pkg/internal/bounded"
	"github.com/slipway-dev/slipway/pkg/strict"
)

// ErrTerraformMissing is returned when a directory is given but no terraform binary is found.
var ErrTerraformMissing = errors.New("terraform is not installed or not in PATH")

// MaxOutputBytes bounds what slipway reads as Terraform output (a file, stdin or what `terraform
// output -json` prints): the user's other outputs are in it too, and may be large.
const MaxOutputBytes = 8 << 20

// MaxContractBytes bounds slipway's own outputs (slipway_*) within it, which are parsed; like a
// manifest, they are a few KiB in practice.
const MaxContractBytes = 1 << 20

// Load reads Terraform output from source: "-" reads stdin, a directory runs
// `terraform output -json` in it, and anything else is read as a JSON file.
func Load(ctx context.Context, source string, stdin io.Reader) (*Output, error) {
	var data []byte
	var err error
	switch fi, statErr := os.Stat(source); {
	case source == "-":
		if stdin == nil {
			return nil, errors.New("reading Terraform output from stdin: no standard input")
		}
		data, err = bounded.ReadAll(stdin, MaxOutputBytes, "the Terraform output on stdin")
		if err != nil {
			return nil, fmt.Errorf("reading Terraform output from stdin: %w", err)
		}
	case statErr != nil:
		return nil, fmt.Errorf("reading Terraform output: %w", statErr)
	case fi.IsDir():
		data, err = outputFromDir(ctx, source)
		if err != nil {
			return nil, err
		}
	default:
		data, err = bounded.ReadFile(source, MaxOutputBytes)
		if err != nil {
			return nil, fmt.Errorf("reading Terraform output: %w", err)
		}
	}
	out, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("terraform output %s: %w", source, err)
	}
	return out, nil
}

// ErrTerraformFailed is returned when `terraform output -json` fails in a directory: a problem
// of the environment (state, backend, credentials), not of the output.
var ErrTerraformFailed = errors.New("terraform output -json failed")

// outputFromDir runs `terraform output -json` in dir, reading at most MaxOutputBytes of it.
func outputFromDir(ctx context.Context, dir string) ([]byte, error) {
	bin, err := exec.LookPath("terraform")
	if err != nil {
		return nil, fmt.Errorf("%w: -t %s is a directory, so slipway runs `terraform output -json` there; install Terraform, or pass a file with that command's output", ErrTerraformMissing, dir)
	}
	tf, err := tfexec.NewTerraform(dir, bin)
	if err != nil {
		return nil, fmt.Errorf("preparing terraform in %s: %w", dir, err)
	}
	// terraform-exec buffers the output itself; these writers see every chunk too and stop the
	// command (through ctx) once it prints more than slipway reads.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stdout := &bounded.Writer{What: "the output of `terraform output -json` in " + dir, Max: MaxOutputBytes, OnOverflow: cancel}
	stderr := &bounded.Writer{What: "the error output of `terraform output -json` in " + dir, Max: 64 << 10, OnOverflow: cancel}
	tf.SetStdout(stdout)
	tf.SetStderr(stderr)
	outputs, err := tf.Output(ctx)
	if tooLarge := errors.Join(stdout.Err(), stderr.Err()); tooLarge != nil {
		return nil, tooLarge
	}
	if err != nil {
		return nil, fmt.Errorf("%w in %s: %w", ErrTerraformFailed, dir, err)
	}
	var b strings.Builder
	b.WriteString("{")
	first := true
	for name, meta := range outputs {
		if !first {
			b.WriteString(",")
		}
		first = false
		fmt.Fprintf(&b, "%q:{\"sensitive\":%t,\"type\":%s,\"value\":%s}", name, meta.Sensitive, orNull(meta.Type), orNull(meta.Value))
	}
	b.WriteString("}")
	return []byte(b.String()), nil
}

func orNull(b []byte) string {
	if len(b) == 0 {
		return "null"
	}
	return string(b)
}

// Parse checks `terraform output -json` text against the contract. Outputs not named slipway_*
// are ignored; an unknown slipway_* output or an unknown field inside one is an error naming it.
// KubeOne's outputs (kubeone_api, kubeone_hosts, kubeone_static_workers, kubeone_workers) are
// read instead when there are no slipway_* outputs (see parseKubeOne); both at once is an error.
func Parse(data []byte) (*Output, error) {
	data, err := keepContract(data)
	if err != nil {
		return nil, err
	}
	node, err := strict.Parse(data)
	if err != nil {
		return nil, err
	}
	if node.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: expected a JSON object of outputs, as printed by `terraform output -json`", node.Line)
	}
	// Keep only slipway_* outputs; the user's other outputs are none of our business.
	kept := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: node.Line}
	kubeone := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: node.Line}
	for i := 0; i+1 < len(node.Content); i += 2 {
		switch name := node.Content[i].Value; {
		case strings.HasPrefix(name, "slipway_"):
			kept.Content = append(kept.Content, node.Content[i], node.Content[i+1])
		case isKubeOneOutput(name):
			kubeone.Content = append(kubeone.Content, node.Content[i], node.Content[i+1])
		}
	}
	if len(kept.Content) > 0 && len(kubeone.Content) > 0 {
		return nil, fmt.Errorf("the output has both slipway's outputs (%s) and KubeOne's (%s); slipway reads one set or the other, so remove one of them",
			kept.Content[0].Value, kubeone.Content[0].Value)
	}
	if len(kubeone.Content) > 0 {
		return parseKubeOne(kubeone)
	}
	var doc document
	tree, err := strict.DecodeNode(kept, &doc, nil)
	if err != nil {
		return nil, err
	}
	out := &Output{StaticWorkers: map[string]HostGroup{}, Workers: map[string]WorkerPool{}, workerTrees: map[string]map[string]any{}}
	if doc.API != nil {
		out.API = doc.API.Value
	}
	if doc.Hosts != nil && doc.Hosts.Value != nil {
		out.ControlPlane = doc.Hosts.Value.ControlPlane
	}
	if doc.StaticWorkers != nil {
		out.StaticWorkers = doc.StaticWorkers.Value
	}
	if doc.Workers != nil {
		out.Workers = doc.Workers.Value
		out.workerTrees = workerTrees(tree)
	}
	return out, nil
}

// workerTrees extracts slipway_workers.value as generic trees.
func workerTrees(tree any) map[string]map[string]any {
	res := map[string]map[string]any{}
	top, _ := tree.(map[string]any)
	env, _ := top[OutputWorkers].(map[string]any)
	pools, _ := env["value"].(map[string]any)
	for name, p := range pools {
		if m, ok := p.(map[string]any); ok {
			res[name] = m
		}
	}
	return res
}
