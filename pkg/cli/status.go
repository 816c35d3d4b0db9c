package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/slipway-dev/slipway/pkg/cluster"
	"github.com/slipway-dev/slipway/pkg/internal/plural"
)

// ErrUnhealthy is returned by status for a cluster that is not healthy; it exits with
// ExitUnhealthy.
var ErrUnhealthy = errors.New("the cluster is not healthy")

func newStatusCommand(g *globalOptions, s Streams) *cobra.Command {
	var (
		sf     sshFlags
		output string
	)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Report the health of the cluster's hosts, nodes, API servers, etcd, certificates and worker pools",
		Long: `status reaches every host of the manifest over SSH and the cluster through its API and etcd,
and prints one line per host (SSH, Node, kubelet version, and on control planes the API
server's /readyz and the first of kubeadm's certificates to expire), the etcd members with
their health and alarms, and each worker pool's replicas and ready machines. It changes nothing.

The cluster is unhealthy when a host cannot be reached, a host has no Ready Node, a control
plane's API server is not ready, an etcd member is unhealthy or missing or has an alarm
(NOSPACE, CORRUPT: see slipway etcd disarm --help), a certificate expires within 30 days
(kubeadm renews them only on upgrades), or a worker pool has fewer ready machines than
replicas. status then lists why and exits with code 4, so that it can gate scripts and CI.`,
		Example: `  slipway status -m cluster.yaml -t tf.json
  slipway status -m cluster.yaml -o json | jq '.problems'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := outputFormat(output, "text", "json"); err != nil {
				return err
			}
			return sf.with(cmd, g, s, func(target *cluster.Target) error {
				now := time.Now()
				st, err := cluster.ClusterStatus(cmd.Context(), target, cluster.StatusOptions{Now: func() time.Time { return now }})
				if err != nil {
					return err
				}
				if err := cluster.PrintStatus(s.Out, st, output == "json", now); err != nil {
					return err
				}
				if !st.Healthy {
					return fmt.Errorf("%w: %s", ErrUnhealthy, plural.Count(len(st.Problems), "problem"))
				}
				return nil
			})
		},
	}
	// status reports a host that is down now, rather than waiting for it to boot.
	sf.addWithTimeout(cmd, 10*time.Second)
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}
