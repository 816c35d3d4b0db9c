package cli

import (
	"github.com/spf13/cobra"

	"github.com/slipway-dev/slipway/pkg/cluster"
)

func newResetCommand(g *globalOptions, s Streams) *cobra.Command {
	var (
		sf   sshFlags
		opts cluster.ResetOptions
	)
	cmd := &cobra.Command{
		Use:   "reset",
		Short: "Tear the cluster down and clean the hosts",
		Long: `reset deletes the worker pools (waiting until the machine-controller has deleted their
servers), then runs kubeadm reset on every host and removes Kubernetes' state, CNI
configuration, kube-proxy and CNI iptables rules and slipway's files, leaving the hosts ready
for a new apply. Data in the cluster is lost.`,
		Example: `  slipway reset -m cluster.yaml -t tf.json
  slipway reset -m cluster.yaml -t tf.json --auto-approve --remove-binaries`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return sf.with(cmd, g, s, func(target *cluster.Target) error {
				opts.Out = g.progress(s)
				opts.Parallel = sf.parallel
				opts.Confirm = terminalConfirm(s)
				return cluster.Reset(cmd.Context(), target, opts)
			})
		},
	}
	sf.add(cmd)
	cmd.Flags().BoolVar(&opts.DestroyWorkers, "destroy-workers", true, "delete the MachineDeployments and wait for their machines to go first")
	cmd.Flags().BoolVar(&opts.RemoveBinaries, "remove-binaries", false, "also uninstall kubeadm, kubelet and kubectl")
	cmd.Flags().BoolVarP(&opts.AutoApprove, "auto-approve", "y", false, "do not ask for confirmation")
	return cmd
}
