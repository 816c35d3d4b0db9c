package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/config"
	"github.com/slipway-dev/slipway/pkg/imagelist"
	"github.com/slipway-dev/slipway/pkg/version"
	"github.com/slipway-dev/slipway/pkg/workers"
	"github.com/slipway-dev/slipway/pkg/yamlfmt"
)

func newConfigCommand(g *globalOptions, s Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Write, check and expand cluster manifests",
		Args:  noUnknownCommand,
		RunE:  helpOrUnknown,
	}
	cmd.AddCommand(newConfigPrintCommand(s), newConfigDumpCommand(g, s), newConfigMachineDeploymentsCommand(g, s), withSpelling(newConfigImagesCommand(g, s), "list", func() *cobra.Command { return newConfigImagesCommand(g, s) }, nil),
		newConfigMigrateCommand(g, s))
	return cmd
}

func newConfigPrintCommand(s Streams) *cobra.Command {
	var full bool
	cmd := &cobra.Command{
		Use:   "print",
		Short: "Print a starting manifest",
		Long: `Print a minimal valid manifest, or with --full every field of the manifest API with its
documentation as YAML comments. Alternatives that are not chosen are commented out, so the
full output is itself a valid manifest.`,
		Example: "  slipway config print > cluster.yaml\n  slipway config print --full | less",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if full {
				_, err := io.WriteString(s.Out, v1beta1.Reference())
				return err
			}
			_, err := io.WriteString(s.Out, v1beta1.Minimal())
			return err
		},
	}
	cmd.Flags().BoolVar(&full, "full", false, "print every field with its documentation")
	return cmd
}

func newConfigDumpCommand(g *globalOptions, s Streams) *cobra.Command {
	var output string
	var showSecrets bool
	cmd := &cobra.Command{
		Use:   "dump",
		Short: "Print the manifest merged with the Terraform output and defaulted",
		Long: `Load the manifest and the Terraform output exactly as apply does (strict decoding,
merge, defaults, validation) and print the result. Use it to check a manifest, or to see
which values slipway will use. Secrets (registry passwords, auth strings and identity
tokens, proxy passwords, the cloud configuration) are shown as <redacted> unless
--show-secrets is given.`,
		Example: "  slipway config dump -m cluster.yaml -t tf.json\n  terraform output -json | slipway config dump -m cluster.yaml -t - -o json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := outputFormat(output, "yaml", "json"); err != nil {
				return err
			}
			res, err := load(cmd, g, s)
			if err != nil {
				return err
			}
			c := res.Cluster
			if !showSecrets {
				c = c.Redacted()
			}
			return write(s.Out, output, c)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "output format: yaml or json")
	readsInputs(cmd)
	cmd.Flags().BoolVar(&showSecrets, "show-secrets", false, "print registry passwords, proxy passwords and the cloud configuration as they are")
	return cmd
}

func newConfigMachineDeploymentsCommand(g *globalOptions, s Streams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "machinedeployments",
		Aliases: []string{"md"},
		Short:   "Print the MachineDeployments that apply creates for the worker pools",
		Example: "  slipway config machinedeployments -m cluster.yaml -t tf.json\n  slipway config machinedeployments -m cluster.yaml -t ./terraform | kubectl apply -f -",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := outputFormat(output, "yaml", "json"); err != nil {
				return err
			}
			res, err := load(cmd, g, s)
			if err != nil {
				return err
			}
			mds, err := workers.MachineDeployments(res.Cluster)
			if err != nil {
				return err
			}
			if output == "json" {
				return write(s.Out, "json", map[string]any{"apiVersion": "v1", "kind": "List", "items": mds})
			}
			if len(mds) == 0 {
				fmt.Fprintln(s.Err, "no worker pools: the manifest and the Terraform output define no workers")
				return nil
			}
			out, err := workers.Marshal(mds)
			if err != nil {
				return err
			}
			_, err = s.Out.Write(out)
			return err
		},
	}
	readsInputs(cmd)
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "output format: yaml or json")
	return cmd
}

func newConfigImagesCommand(g *globalOptions, s Streams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "images",
		Short: "Print every container image the cluster runs",
		Long: `Print the images the manifest's cluster pulls, exactly as it pulls them (after
registryConfiguration.overwriteRegistry): kubeadm's control-plane images for the Kubernetes
version (kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy unless Cilium
replaces it, etcd, CoreDNS, pause), the CNI's, the machine-controller's when
machineController.deploy is true, and the OpenStack cloud-controller-manager's with
cloudProvider.openstack and external. The last two are imported from
machineController.imageArchive instead when it is set. Use it to fill or check the mirror
that overwriteRegistry names, or to preload hosts. The list is sorted with each image once:
one reference per line, or with -o json a list of objects naming the components that run
each image. KubeOne's spelling, slipway config images list, is the same command.`,
		Example: `  slipway config images -m cluster.yaml
  slipway config images -m cluster.yaml -t tf.json -o json
  # check that the registry serves every image the cluster will ask for:
  slipway config images -m cluster.yaml | xargs -n1 docker pull`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := outputFormat(output, "text", "json"); err != nil {
				return err
			}
			res, err := load(cmd, g, s)
			if err != nil {
				return err
			}
			imgs, err := imagelist.For(res.Cluster)
			if err != nil {
				return err
			}
			if output == "json" {
				return write(s.Out, "json", imgs)
			}
			for _, ref := range imagelist.Refs(imgs) {
				if _, err := fmt.Fprintln(s.Out, ref); err != nil {
					return err
				}
			}
			return nil
		},
	}
	readsInputs(cmd)
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text (one reference per line) or json")
	return cmd
}

// load runs the shared manifest pipeline and prints its warnings.
func load(cmd *cobra.Command, g *globalOptions, s Streams) (*config.Result, error) {
	res, err := config.Load(cmd.Context(), config.Options{
		ManifestPath:    g.manifest,
		TerraformSource: g.terraform,
		Stdin:           s.In,
		ImageTag:        version.ImageTag(),
		// Worker pools are checked under the policy apply deploys: the credentials Secret
		// carries these same variables to the machine-controller.
		LookupEnv: os.LookupEnv,
	})
	if err != nil {
		return nil, err
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(s.Err, "Warning:", w)
	}
	return res, nil
}

func write(w io.Writer, format string, v any) error {
	if format == "json" {
		return printJSON(w, v)
	}
	out, err := yamlfmt.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}
