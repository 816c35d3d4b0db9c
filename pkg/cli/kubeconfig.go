package cli

import (
	"github.com/spf13/cobra"

	"github.com/slipway-dev/slipway/pkg/cluster"
)

func newKubeconfigCommand(g *globalOptions, s Streams) *cobra.Command {
	var sf sshFlags
	cmd := &cobra.Command{
		Use:   "kubeconfig",
		Short: "Print the cluster's admin kubeconfig",
		Long: `Print the admin kubeconfig, read from a control-plane host over SSH. It grants full control
of the cluster: store it with mode 0600 (apply saves it as <cluster>-kubeconfig that way).`,
		Example: `  slipway kubeconfig -m cluster.yaml -t tf.json > admin.conf && chmod 600 admin.conf`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := load(cmd, g, s)
			if err != nil {
				return err
			}
			pool, target, err := cluster.Connect(res.Cluster, sf.connectOptions(g, s))
			if err != nil {
				return err
			}
			defer pool.Close()
			data, err := cluster.FetchKubeconfig(cmd.Context(), target)
			if err != nil {
				return err
			}
			_, err = s.Out.Write(data)
			return err
		},
	}
	sf.add(cmd)
	return cmd
}
