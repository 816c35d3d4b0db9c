package cli

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/slipway-dev/slipway/pkg/cluster"
)

func newEtcdCommand(g *globalOptions, s Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "etcd",
		Short: "Inspect and back up the cluster's etcd",
		Long: `The etcd commands reach the cluster's stacked etcd through a control plane over SSH, with
kubeadm's etcd health-check client certificate; etcd need not be reachable from this machine.`,
		Args: noUnknownCommand,
		RunE: helpOrUnknown,
	}
	cmd.AddCommand(newEtcdMembersCommand(g, s), newEtcdSnapshotCommand(g, s))
	return cmd
}

func newEtcdMembersCommand(g *globalOptions, s Streams) *cobra.Command {
	var (
		sf     sshFlags
		output string
	)
	cmd := &cobra.Command{
		Use:     "members",
		Short:   "List the etcd members with their health, version, database size and the leader",
		Example: `  slipway etcd members -m cluster.yaml -t tf.json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := outputFormat(output, "text", "json"); err != nil {
				return err
			}
			pool, target, err := sf.connect(cmd, g, s)
			if err != nil {
				return err
			}
			defer pool.Close()
			ms, err := cluster.EtcdMembers(cmd.Context(), target)
			if err != nil {
				return err
			}
			if output == "json" {
				enc := json.NewEncoder(s.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(ms)
			}
			tw := tabwriter.NewWriter(s.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tID\tPEER URL\tHEALTHY\tLEADER\tVERSION\tDB SIZE")
			for _, m := range ms {
				peer := ""
				if len(m.PeerURLs) > 0 {
					peer = m.PeerURLs[0]
				}
				size := "-"
				if m.DBSize > 0 {
					size = fmt.Sprintf("%.1f MiB", float64(m.DBSize)/(1<<20))
				}
				fmt.Fprintf(tw, "%s\t%x\t%s\t%t\t%t\t%s\t%s\n", m.Name, m.ID, peer, m.Healthy, m.Leader, dashIfEmpty(m.Version), size)
			}
			return tw.Flush()
		},
	}
	sf.add(cmd)
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

func newEtcdSnapshotCommand(g *globalOptions, s Streams) *cobra.Command {
	var (
		sf   sshFlags
		file string
	)
	cmd := &cobra.Command{
		Use:   "snapshot -o FILE",
		Short: "Save a consistent snapshot of etcd to a file on this machine",
		Long: `snapshot streams a consistent snapshot of etcd (as etcdctl snapshot save takes it) from a
control plane to FILE on this machine, checks the SHA-256 etcd appends to it, and writes
FILE.sha256 beside it (sha256sum -c reads it). FILE is written with mode 0600: it holds every
Secret of the cluster. An existing FILE is never overwritten, and an interrupted snapshot leaves
no file behind.`,
		Example: `  slipway etcd snapshot -m cluster.yaml -o etcd-$(date +%F).db`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return usageErrorf("snapshot needs -o FILE")
			}
			pool, target, err := sf.connect(cmd, g, s)
			if err != nil {
				return err
			}
			defer pool.Close()
			snap, err := cluster.EtcdSnapshot(cmd.Context(), target, file)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(s.Out, "etcd snapshot written to %s (%.1f MiB, sha256 %s)\n", snap.Path, float64(snap.Bytes)/(1<<20), snap.SHA256)
			return err
		},
	}
	sf.add(cmd)
	cmd.Flags().StringVarP(&file, "output", "o", "", "file to write the snapshot to (required; never overwritten)")
	return cmd
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
