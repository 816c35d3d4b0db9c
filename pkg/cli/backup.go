package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/slipway-dev/slipway/pkg/cluster"
)

func newBackupCommand(g *globalOptions, s Streams) *cobra.Command {
	var (
		sf     sshFlags
		output string
	)
	cmd := &cobra.Command{
		Use:   "backup DIR",
		Short: "Save the cluster's CAs and keys and an etcd snapshot into a directory on this machine",
		Long: `backup writes a fresh backup of the cluster into DIR (made with mode 0700 if missing): the
cluster, front-proxy and etcd CAs with their keys and the service-account key pair, and for a
cluster that encrypts Secrets at rest the encryption configuration with its keys, as
<cluster>-<time>-pki.tar.gz, and a consistent etcd snapshot as <cluster>-<time>-etcd.db with
its SHA-256 checked and written beside it (see slipway etcd snapshot). Every file has mode 0600:
together they can sign for the cluster and hold every Secret. Existing files are never
overwritten.

apply saves the CAs and keys the first time (<cluster>-pki.tar.gz), and again when the
encryption configuration changes; backup is for the regular copies an operator keeps, with the
etcd data of the day: a snapshot is restored with the PKI backup of its time (after a key
rotation, an older snapshot needs the older key).`,
		Example: `  slipway backup -m cluster.yaml -t tf.json /srv/backups/my-cluster
  slipway backup -m cluster.yaml backups -o json | jq -r .etcdSnapshot.path`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 || args[0] == "" {
				return usageErrorf("backup needs one argument, the directory to write into")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if err := outputFormat(output, "text", "json"); err != nil {
				return err
			}
			return sf.with(cmd, g, s, func(target *cluster.Target) error {
				b, err := cluster.TakeBackup(cmd.Context(), target, dir, time.Now())
				if err != nil {
					return err
				}
				if output == "json" {
					return printJSON(s.Out, b)
				}
				what := "CAs and keys"
				if b.Encryption {
					what += ", encryption configuration"
				}
				_, err = fmt.Fprintf(s.Out, "%s: %s\netcd snapshot: %s (%s, sha256 %s)\n", what, b.PKI, b.Snapshot.Path, mib(b.Snapshot.Bytes), b.Snapshot.SHA256)
				return err
			})
		},
	}
	sf.add(cmd)
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}
