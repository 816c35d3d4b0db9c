package cli

import (
	"bytes"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/config"
	"github.com/slipway-dev/slipway/pkg/internal/bounded"
	"github.com/slipway-dev/slipway/pkg/kubeone"
	"github.com/slipway-dev/slipway/pkg/terraform"
	"github.com/slipway-dev/slipway/pkg/version"
)

func newConfigMigrateCommand(g *globalOptions, s Streams) *cobra.Command {
	var from, output string
	cmd := &cobra.Command{
		Use:   "migrate --from-kubeone FILE",
		Short: "Convert a KubeOne manifest into a slipway manifest",
		Long: `Read a KubeOneCluster manifest (kubeone.k8c.io/v1beta2 or v1beta3) and print the slipway
manifest that describes the same cluster. Every KubeOne field is either carried over or named
in a warning on stderr with its path and the reason (slipway does not support it, or no longer
needs it); where KubeOne's default differs from slipway's, the KubeOne default is written out
with a comment. KubeOne's Terraform outputs (kubeone_api, kubeone_hosts, kubeone_static_workers,
kubeone_workers) are read by -t as they are, so the Terraform needs no change. Pass -t with the
output KubeOne used: what KubeOne took from it instead of the manifest (the cloud when the
manifest names none, as with cloudProvider: {external: true} alone; the cluster's name; the API
endpoint; the control-plane hosts) is left to it, each difference in a warning, and static
workers in both the manifest and the output, which KubeOne adds together, are an error naming
the field.

The result is then loaded as apply would load it (with -t when given, - included): when it does not load,
the manifest and the warnings are still printed, for you to finish by hand, and the command
exits 3 naming what stops it (pass -t when the hosts come from the Terraform output). A
manifest of another kind or version, malformed YAML, or a field KubeOne does not know is an
error naming the field (exit code 3) and prints nothing, as is a cloud other than OpenStack or
none, or a Kubernetes version outside slipway's window. Names and values of the KubeOne
manifest in warnings have their control characters escaped.

With -o json the manifest and the warnings are printed as one JSON object
({"cluster": ..., "warnings": [{"path": ..., "message": ...}]}) and nothing goes to stderr.`,
		Example: `  slipway config migrate --from-kubeone kubeone.yaml > cluster.yaml
  slipway config dump -m cluster.yaml -t ./terraform     # the same Terraform KubeOne used
  # the warnings alone, machine-readably:
  slipway config migrate --from-kubeone kubeone.yaml -o json | jq -r '.warnings[] | .path + ": " + .message'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := outputFormat(output, "yaml", "json"); err != nil {
				return err
			}
			if from == "" {
				return usageErrorf("--from-kubeone is required: the KubeOneCluster manifest to convert (- for stdin)")
			}
			if from == "-" && g.terraform == "-" {
				return usageErrorf("the KubeOne manifest and the Terraform output cannot both be read from stdin")
			}
			var data []byte
			var err error
			if from == "-" {
				data, err = bounded.ReadAll(s.In, config.MaxManifestBytes, "the KubeOne manifest on stdin")
			} else {
				data, err = bounded.ReadFile(from, config.MaxManifestBytes)
			}
			if err != nil {
				return &config.Error{Source: from, Err: fmt.Errorf("reading the KubeOne manifest: %w", err)}
			}
			// KubeOne takes some of the cluster from its Terraform output in preference to the
			// manifest: the conversion needs to know what the output says.
			var tf *terraform.Output
			if g.terraform != "" {
				if tf, err = config.LoadTerraform(cmd.Context(), g.terraform, s.In); err != nil {
					return err
				}
			}
			res, err := kubeone.Convert(data, tf.ForKubeOne())
			if err != nil {
				return &config.Error{Source: from, Err: err}
			}
			manifest, err := res.Manifest(from)
			if err != nil {
				return err
			}
			invalid := check(cmd, g, manifest, tf)
			if output == "json" {
				warnings := res.Warnings
				if invalid != nil {
					warnings = append(warnings, kubeone.Warning{Path: "(result)", Message: invalid.Error()})
				}
				if warnings == nil {
					warnings = []kubeone.Warning{}
				}
				if err := write(s.Out, "json", struct {
					Cluster  *v1beta1.Cluster  `json:"cluster"`
					Warnings []kubeone.Warning `json:"warnings"`
				}{res.Cluster, warnings}); err != nil {
					return err
				}
				return invalid
			}
			if _, err := s.Out.Write(manifest); err != nil {
				return err
			}
			if _, err := fmt.Fprint(s.Err, kubeone.Lines(res.Warnings)); err != nil {
				return err
			}
			return invalid
		},
	}
	reads(cmd, flagTerraform, flagLogFormat)
	cmd.Flags().StringVar(&from, "from-kubeone", "", "the KubeOneCluster manifest to convert (- for stdin)")
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "output format: yaml (the manifest; warnings on stderr) or json (manifest and warnings)")
	return cmd
}

// check loads the converted manifest as apply would, with the Terraform output tf that -t
// named, and returns what stops it as a config.Error (exit code 3), nil when it loads. A
// migrated manifest often gets its hosts from Terraform: without -t the error says to pass it.
func check(cmd *cobra.Command, g *globalOptions, manifest []byte, tf *terraform.Output) error {
	_, err := config.Load(cmd.Context(), config.Options{
		ManifestPath:    "-",
		Stdin:           bytes.NewReader(manifest),
		TerraformSource: g.terraform,
		Terraform:       tf,
		ImageTag:        version.ImageTag(),
	})
	if err == nil {
		return nil
	}
	source := "the migrated manifest"
	if g.terraform == "" {
		source += " (pass -t with the Terraform output if the hosts come from there)"
	}
	return &config.Error{Source: source, Err: err}
}
